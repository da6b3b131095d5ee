"""Parse what a person typed into a safe, vendor-neutral query tree.

The grammar is the web-search one people already know::

    energy prices           either word; documents with more (and rarer) of them rank first
    energy AND profit       both words (AND binds tighter than OR and than a plain space)
    oil OR gas              either word (the same as a space, spelled out)
    oil NOT gas, oil -gas   documents with "oil" and without "gas"
    "crude oil"             the words next to each other, in this order
    energ*                  any word starting with "energ" (at least MIN_PREFIX_CHARS letters)
    (oil OR gas) AND opec   parentheses group

Operators count only in upper case (``and``/``or``/``not`` are words, as on Google). A query
whose operators cannot be read (an unmatched quote or parenthesis, ``AND`` with nothing on one
side) is searched as its plain words, with a message saying so. Everything else a person may
type (``title:``, ``^``, ``~``, ``NEAR(…)``) is reduced to words: the backend compiles only the
tree built here, so no input reaches the index as syntax.

Why a plain space means OR: on Cranfield's natural-language queries OR-ing the words and letting
BM25 rank documents holding more (and rarer) of them first beats AND-ing every word, which
leaves most queries with no result at all (BENCHMARKS.md, bench/ranking_cranfield.py).
Stopwords (English's record's query stop words, ``searchapp.language_components``) are dropped
from OR lists (they would match nearly every document) unless the list has nothing else; an
explicit ``AND the`` keeps its word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from searchapp.language_components import components
from searchapp.search.analysis import UNSPACED_CHARS

__all__ = [
    "EMPTY_QUERY_MESSAGE",
    "MAX_NESTING",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "MIN_PREFIX_CHARS",
    "AllOf",
    "AnyOf",
    "Node",
    "ParsedQuery",
    "Phrase",
    "Prefix",
    "Term",
    "parse_query",
]

# Queries are not told their language: English's query stop words are every query's.
STOPWORDS = components("en").query_stop_words

MAX_QUERY_CHARS = 500
# Distinct words, phrases and prefixes in one query, at most.
MAX_QUERY_TERMS = 40
# Parentheses and NOTs nested deeper than this are not read as operators (the words are searched
# plainly, with a message): no one means 9 levels, and the parser and every walk of the tree
# recurse once per level, so an unbounded depth is a RecursionError (a 500) from 330 "(".
MAX_NESTING = 8
# ``a*`` would expand to every word of the index starting with "a": a prefix needs this many
# letters (the expansion is also capped, by the backend, to the most frequent matching words).
MIN_PREFIX_CHARS = 3
EMPTY_QUERY_MESSAGE = "Type something to search"
MatchMode = Literal["or", "and"]


@dataclass(frozen=True)
class Term:
    word: str  # a run of \w characters, lower-cased


@dataclass(frozen=True)
class Phrase:
    words: tuple[str, ...]  # 2+ words, adjacent and in order


@dataclass(frozen=True)
class Prefix:
    start: str  # lower-cased, at least MIN_PREFIX_CHARS characters


@dataclass(frozen=True)
class AnyOf:
    """Documents matching any item (ranked by how many and how rare), none of ``excluded``."""

    items: tuple[Node, ...]
    excluded: tuple[Node, ...] = ()


@dataclass(frozen=True)
class AllOf:
    """Documents matching every item, none of ``excluded``."""

    items: tuple[Node, ...]
    excluded: tuple[Node, ...] = ()


Node: TypeAlias = Term | Phrase | Prefix | AnyOf | AllOf


@dataclass(frozen=True)
class _Not:
    node: Node


@dataclass(frozen=True)
class ParsedQuery:
    original: str
    root: AnyOf | AllOf | None = None  # None: nothing to search for
    mode: MatchMode = "or"
    messages: tuple[str, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        return self.root is None

    @property
    def message(self) -> str | None:
        return " ".join(self.messages) if self.messages else None

    def positive_leaves(self) -> list[Term | Phrase | Prefix]:
        """The words, phrases and prefixes searched for (not the excluded ones), in order."""
        return list(_leaves(self.root)) if self.root is not None else []

    def plain_terms(self) -> tuple[str, ...]:
        """Every positive word, phrase words included."""
        words: list[str] = []
        for leaf in self.positive_leaves():
            if isinstance(leaf, Term):
                words.append(leaf.word)
            elif isinstance(leaf, Phrase):
                words.extend(leaf.words)
        return tuple(dict.fromkeys(words))

    def describe(self) -> str:
        return describe(self.root) if self.root is not None else ""


def _leaves(node: Node) -> Iterator[Term | Phrase | Prefix]:
    if isinstance(node, AnyOf | AllOf):
        for item in node.items:
            yield from _leaves(item)
    else:
        yield node


def describe(node: Node, *, nested: bool = False) -> str:
    """The tree written back in the query language (what was actually searched)."""
    if isinstance(node, Term):
        return node.word
    if isinstance(node, Phrase):
        return '"' + " ".join(node.words) + '"'
    if isinstance(node, Prefix):
        return node.start + "*"
    joiner = " AND " if isinstance(node, AllOf) else " "
    parts = [describe(item, nested=True) for item in node.items]
    parts += ["-" + describe(item, nested=True) for item in node.excluded]
    text = joiner.join(parts[: len(node.items)])
    if node.excluded:
        text = " ".join([text, *parts[len(node.items) :]])
    return f"({text})" if nested and len(parts) > 1 else text


# --- tokens ----------------------------------------------------------------------------------

# A word: letters and digits, with the combining marks of scripts that write vowels and
# viramas as marks (Thai, Devanagari), which \w alone would cut a word at.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0dff\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd"
    "\u1000-\u109f\u17b4-\u17d3"
)
_WORD = re.compile(rf"[\w{_MARKS}]+")
_WORD_STAR = re.compile(rf"([\w{_MARKS}]+)(\*?)")
_UNSPACED = re.compile(f"[{UNSPACED_CHARS}]")
# A quoted phrase, a parenthesis, or a chunk of anything else up to a space, quote or parenthesis.
_TOKEN = re.compile(r'"([^"]*)"|([()])|([^\s"()]+)')
_OPERATORS = frozenset({"AND", "OR", "NOT"})


class _SyntaxProblem(Exception):
    """The operators cannot be read; the message says why, for the person searching."""


@dataclass(frozen=True)
class _Tok:
    kind: Literal["(", ")", "AND", "OR", "NOT", "-", "leaf"]
    node: Node | None = None


def _chunk_node(chunk: str, notes: list[str]) -> Node | None:
    """A bare chunk: a word, a prefix*, or several words glued by punctuation (``U.S.``)."""
    items: list[Node] = []
    for match in _WORD_STAR.finditer(chunk):
        word, star = match.group(1).lower(), match.group(2)
        if star and _UNSPACED.search(word):
            # Every character is a word there: a run of them is found wherever it occurs,
            # at the start of a longer run too, so the prefix is the word itself.
            items.append(Term(word))
        elif star and len(word) >= MIN_PREFIX_CHARS:
            items.append(Prefix(word))
        else:
            if star:
                notes.append(
                    f"“{word}*”: a prefix needs at least {MIN_PREFIX_CHARS} letters, "
                    f"so “{word}” was searched as a word."
                )
            items.append(Term(word))
    if not items:
        return None
    return items[0] if len(items) == 1 else AnyOf(tuple(items))


def _tokens(text: str, notes: list[str]) -> list[_Tok]:
    if text.count('"') % 2:
        raise _SyntaxProblem("The query has an unmatched quote (\")")
    tokens: list[_Tok] = []
    for match in _TOKEN.finditer(text):
        quoted, paren, chunk = match.groups()
        if paren:
            tokens.append(_Tok(paren))  # type: ignore[arg-type]
            continue
        if quoted is not None:
            words = tuple(w.lower() for w in _WORD.findall(quoted))
            if len(words) == 1:
                tokens.append(_Tok("leaf", Term(words[0])))
            elif words:
                tokens.append(_Tok("leaf", Phrase(words)))
            elif tokens and tokens[-1].kind == "-":
                tokens.pop()  # -"" excludes nothing
            continue
        if chunk in _OPERATORS:
            tokens.append(_Tok(chunk))  # type: ignore[arg-type]
            continue
        # "-word", "-(…)", '-"phrase"': the dash excludes what follows it directly.
        stripped = chunk.lstrip("-")
        if len(stripped) < len(chunk):
            end = match.end()
            if stripped or (end < len(text) and text[end] in '("'):
                tokens.append(_Tok("-"))
        node = _chunk_node(stripped, notes) if stripped else None
        if node is not None:
            tokens.append(_Tok("leaf", node))
    return tokens


# --- grammar ---------------------------------------------------------------------------------
#   list    := and_expr ( ["OR"] and_expr )*      (a space is OR, or AND in "and" mode)
#   and_expr := unary ( "AND" unary )*
#   unary   := ("NOT" | "-") unary | primary
#   primary := "(" list ")" | leaf


class _Parser:
    def __init__(self, tokens: list[_Tok], mode: MatchMode) -> None:
        self.tokens = tokens
        self.at = 0
        self.mode = mode
        self.depth = 0  # parentheses and NOTs open at this point

    def peek(self) -> str | None:
        return self.tokens[self.at].kind if self.at < len(self.tokens) else None

    def take(self) -> _Tok:
        if self.at >= len(self.tokens):
            raise _SyntaxProblem("The query ends in the middle of an expression")
        token = self.tokens[self.at]
        self.at += 1
        return token

    def parse(self) -> Node | _Not | None:
        if not self.tokens:
            return None
        node = self.list()
        if self.peek() == ")":
            raise _SyntaxProblem("The query has an unmatched closing parenthesis")
        return node

    def list(self) -> Node | _Not:
        ored: list[Node | _Not] = []
        anded: list[Node | _Not] = [self.and_expr()]
        while self.peek() not in (None, ")"):
            if self.peek() == "OR":
                self.take()
                if self.peek() in (None, ")", "OR", "AND"):
                    raise _SyntaxProblem("“OR” needs something on both sides")
                ored.append(_group(anded, all_of=True))
                anded = [self.and_expr()]
            elif self.mode == "and":
                anded.append(self.and_expr())
            else:
                ored.append(_group(anded, all_of=True))
                anded = [self.and_expr()]
        ored.append(_group(anded, all_of=True))
        return _group(ored, all_of=False)

    def and_expr(self) -> Node | _Not:
        if self.peek() in ("AND", "OR"):
            raise _SyntaxProblem(f"“{self.peek()}” needs something on both sides")
        items = [self.unary()]
        while self.peek() == "AND":
            self.take()
            if self.peek() in (None, ")", "AND", "OR"):
                raise _SyntaxProblem("“AND” needs something on both sides")
            items.append(self.unary())
        return _group(items, all_of=True)

    def unary(self) -> Node | _Not:
        kind = self.peek()
        if kind in ("NOT", "-", "("):
            if self.depth >= MAX_NESTING:
                raise _SyntaxProblem(
                    f"The query nests parentheses or NOT more than {MAX_NESTING} levels deep"
                )
            self.depth += 1
            try:
                return self._nested(kind)
            finally:
                self.depth -= 1
        if kind == ")":
            raise _SyntaxProblem("The query has an unmatched closing parenthesis")
        token = self.take()
        assert token.node is not None  # kind == "leaf"
        return token.node

    def _nested(self, kind: str) -> Node | _Not:
        if kind in ("NOT", "-"):
            self.take()
            if self.peek() in (None, ")", "AND", "OR"):
                raise _SyntaxProblem("“NOT” needs a word after it")
            inner = self.unary()
            return inner.node if isinstance(inner, _Not) else _Not(inner)
        if kind == "(":
            self.take()
            if self.peek() == ")":
                self.take()
                return AnyOf(())  # "()" holds nothing; dropped by _group
            inner = self.list()
            if self.peek() != ")":
                raise _SyntaxProblem("The query has an unmatched opening parenthesis")
            self.take()
            return inner
        raise AssertionError(kind)  # unary() sends only "NOT", "-" and "("


def _group(parts: list[Node | _Not], *, all_of: bool) -> Node | _Not:
    """One AllOf/AnyOf of ``parts``: negations become its exclusions, a lone item stands alone,
    nested lists of the same kind are flattened, duplicates dropped."""
    items: list[Node] = []
    excluded: list[Node] = []
    kind = AllOf if all_of else AnyOf
    for part in parts:
        if isinstance(part, _Not):
            excluded.append(part.node)
        elif isinstance(part, AnyOf | AllOf) and not part.items:
            excluded.extend(part.excluded)  # "(NOT x)" inside a list excludes x from it
        elif isinstance(part, kind) or (isinstance(part, AnyOf | AllOf) and len(part.items) == 1):
            items.extend(part.items)
            excluded.extend(part.excluded)
        else:
            items.append(part)
    items = list(dict.fromkeys(items))
    excluded = list(dict.fromkeys(excluded))
    if not excluded and len(items) == 1:
        return items[0]
    if not items and len(excluded) == 1 and len(parts) == 1:
        return _Not(excluded[0])
    return kind(tuple(items), tuple(excluded))


def _drop_stopwords(node: Node) -> Node:
    if isinstance(node, AllOf):
        return AllOf(tuple(_drop_stopwords(i) for i in node.items), node.excluded)
    if isinstance(node, AnyOf):
        items = [_drop_stopwords(i) for i in node.items]
        kept = [i for i in items if not (isinstance(i, Term) and i.word in STOPWORDS)]
        return AnyOf(tuple(kept or items), node.excluded)
    return node


def _count_leaves(node: Node) -> int:
    if isinstance(node, AnyOf | AllOf):
        return sum(_count_leaves(i) for i in (*node.items, *node.excluded))
    return 1


def _plain_words(text: str, mode: MatchMode) -> AnyOf | AllOf | None:
    # The operators themselves are left out: they are what could not be read.
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text) if w not in _OPERATORS))
    if not words:
        return None
    terms = tuple(Term(w) for w in words[:MAX_QUERY_TERMS])
    return AllOf(terms) if mode == "and" else AnyOf(terms)


def parse_query(raw: str, *, mode: MatchMode = "or") -> ParsedQuery:
    """Parse ``raw``; never raises. An empty result carries EMPTY_QUERY_MESSAGE."""
    messages: list[str] = []
    text = raw if isinstance(raw, str) else ""
    text = text.replace("\x00", " ")
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        messages.append(f"Your query was shortened to its first {MAX_QUERY_CHARS} characters.")
    notes: list[str] = []
    root: Node | _Not | None
    try:
        root = _Parser(_tokens(text, notes), mode).parse()
    except _SyntaxProblem as problem:
        messages.append(f"{problem}, so its words were searched without operators.")
        root = _plain_words(text, mode)
        notes = []
    messages.extend(dict.fromkeys(notes))
    if isinstance(root, _Not) or (isinstance(root, AnyOf | AllOf) and not root.items):
        if (isinstance(root, _Not)) or root.excluded:
            messages.append("Add a word to search for, not only words to exclude.")
            return ParsedQuery(original=raw, mode=mode, messages=tuple(messages))
        root = None
    if root is None:
        return ParsedQuery(original=raw, mode=mode, messages=(EMPTY_QUERY_MESSAGE,))
    if not isinstance(root, AnyOf | AllOf):
        root = AnyOf((root,))
    if _count_leaves(root) > MAX_QUERY_TERMS:
        root = _plain_words(text, mode)
        assert root is not None  # it had more words than the cap
        messages.append(
            f"Only the first {MAX_QUERY_TERMS} words were used, without the query's operators."
        )
    if mode == "or":
        root = _drop_stopwords(root)
        assert isinstance(root, AnyOf | AllOf)
    return ParsedQuery(original=raw, root=root, mode=mode, messages=tuple(messages))
