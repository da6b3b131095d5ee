"""Topic clusters of one result list, each with a readable label (search-results clustering).

A query's top hits (their titles and snippets, already loaded) are organised into a few
labelled topics — "jaguar" → Cars · Big cats · Mac OS — and an "Other topics" bucket, the way
Vivisimo/Clusty, Carrot2 and Yippy do, so the diversity of a result list can be seen and browsed.

Pure library code: scikit-learn and numpy, no Django, no I/O; deterministic for a given input
and ``seed``.

The method:

1. Every document (title + text) is cut into fragments at punctuation and tokenised; the
   features are TF-IDF weighted words and in-fragment word pairs (stop words dropped), so
   "big cat" and "mac os" count as units.
2. The documents are clustered by k-means (k-means++ seeding from ``seed``) on an LSA
   projection of those vectors (truncated SVD, then length-normalised).
3. Each cluster is labelled with the phrase (one to four words, found in the results, never
   starting or ending with a stop word) that best separates it from the rest: the share of
   the cluster's documents containing it times the share of its occurrences inside the
   cluster, with a mild preference for longer phrases (STC's "phrases over words"). The
   phrase is shown in its most frequent original spelling.
4. Clusters smaller than ``min_size`` (or without any label) go to "Other topics", always last.

References: Osiński & Weiss, "A concept-driven algorithm for clustering search results" (Lingo,
2005); Zamir & Etzioni, "Web document clustering: a feasibility demonstration" (STC, 1998);
Navigli & Vannella, SemEval-2013 Task 11 (the evaluation collection, see BENCHMARKS.md).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

__all__ = ["OTHER_LABEL", "Topic", "TopicDoc", "topic_clusters"]

OTHER_LABEL = "Other topics"

# Fragment boundaries: a phrase never spans a sentence, a clause or a " - " / " | " separator.
_FRAGMENT = re.compile(
    "[.!?;:,()\\[\\]{}\"|/\\\\\u00ab\u00bb\u201c\u201d\u2026\u2013\u2014]+"
    "|\\s-\\s|\\s-$|^-\\s"
)
_WORD = re.compile("\\w(?:[\\w'\u2019&-]*\\w)?")
# Snippet debris and web boilerplate that is never a topic.
_EXTRA_STOP = frozenset(
    {
        "http", "https", "www", "com", "org", "net", "html", "htm", "php", "amp", "nbsp",
        "quot", "page", "pages", "home", "homepage", "site", "website", "web", "click",
        "read", "view", "free", "new", "info", "information", "official", "welcome",
        "wikipedia", "encyclopedia", "en", "did", "does", "just", "like", "also", "s", "t",
        "ll", "ve", "re", "d", "m", "le", "la", "les", "de", "del", "der", "die", "das", "und",
        "el", "los", "et", "du", "des", "il", "di", "e", "o", "y", "com's", "inc", "ltd",
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    }
)
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | _EXTRA_STOP


@dataclass(frozen=True)
class TopicDoc:
    """One result: its id (returned in ``Topic.member_ids``), title and text (snippet)."""

    id: Hashable
    title: str
    text: str


@dataclass(frozen=True)
class Topic:
    """A labelled topic: its members' ids in input (rank) order and their number."""

    label: str
    member_ids: tuple[Hashable, ...]
    size: int
    other: bool = False  # the "Other topics" bucket (always the last topic)


@dataclass(frozen=True)
class _Tokens:
    terms: list[list[str]]  # per document: the features (words and in-fragment word pairs)
    phrases: list[set[str]]  # per document: candidate label phrases (lower-case keys)
    surface: dict[str, Counter[str]]  # phrase key -> original spellings


def _is_word(token: str) -> bool:
    return token not in STOP_WORDS and not token.isdigit() and len(token) > 1


def _tokenise(
    docs: Sequence[TopicDoc], *, max_phrase_words: int, excluded: frozenset[str]
) -> _Tokens:
    terms: list[list[str]] = []
    phrases: list[set[str]] = []
    surface: dict[str, Counter[str]] = defaultdict(Counter)
    for doc in docs:
        doc_terms: list[str] = []
        doc_phrases: set[str] = set()
        # The title is a fragment of its own, and counted twice: it is the most topical text.
        text = f"{doc.title}\n{doc.title}\n{doc.text}"
        for line in text.split("\n"):
            for fragment in _FRAGMENT.split(line):
                originals = _WORD.findall(fragment)
                if not originals:
                    continue
                lowers = [w.lower().replace("\u2019", "'") for w in originals]
                content = [w for w in lowers if _is_word(w) and w not in excluded]
                doc_terms.extend(content)
                doc_terms.extend(f"{a} {b}" for a, b in itertools.pairwise(content))
                n = len(lowers)
                for i in range(n):
                    if not _is_word(lowers[i]):
                        continue
                    for j in range(i + 1, min(n, i + max_phrase_words) + 1):
                        if not _is_word(lowers[j - 1]):
                            continue
                        words = lowers[i:j]
                        if all(w in excluded or not _is_word(w) for w in words):
                            continue
                        key = " ".join(words)
                        doc_phrases.add(key)
                        surface[key][" ".join(originals[i:j])] += 1
        terms.append(doc_terms)
        phrases.append(doc_phrases)
    return _Tokens(terms=terms, phrases=phrases, surface=surface)


def _tfidf(terms: list[list[str]], *, min_df: int, max_df: float) -> sparse.csr_matrix:
    """Sublinear TF-IDF rows, L2-normalised, over terms in at least ``min_df`` documents."""
    n = len(terms)
    df: Counter[str] = Counter()
    for doc_terms in terms:
        df.update(set(doc_terms))
    limit = max_df * n
    vocab = {t: i for i, t in enumerate(sorted(t for t, c in df.items() if min_df <= c <= limit))}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for r, doc_terms in enumerate(terms):
        counts = Counter(t for t in doc_terms if t in vocab)
        for t, c in counts.items():
            rows.append(r)
            cols.append(vocab[t])
            vals.append(c)
    matrix = sparse.csr_matrix(
        (np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(n, len(vocab))
    )
    if matrix.nnz:
        matrix.data = 1.0 + np.log(matrix.data)
        idf = np.zeros(len(vocab))
        for t, i in vocab.items():
            idf[i] = np.log((1 + n) / (1 + df[t])) + 1.0
        matrix = matrix @ sparse.diags(idf)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        matrix = sparse.diags(1.0 / norms) @ matrix
    return sparse.csr_matrix(matrix)


def _cluster(matrix: sparse.csr_matrix, k: int, *, n_components: int, seed: int) -> np.ndarray:
    n, d = matrix.shape
    dims = min(n_components, n - 1, d - 1)
    if dims >= 2:
        svd = TruncatedSVD(n_components=dims, random_state=seed, algorithm="arpack")
        reduced = svd.fit_transform(matrix)
    else:
        reduced = matrix.toarray()
    norms = np.linalg.norm(reduced, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    reduced = reduced / norms
    model = KMeans(n_clusters=k, n_init=3, random_state=seed, max_iter=100)
    return np.asarray(model.fit_predict(reduced))


def _labels(
    tokens: _Tokens,
    assignment: np.ndarray,
    clusters: list[int],
    *,
    min_label_df: int,
    length_bonus: float,
) -> dict[int, str | None]:
    """The best phrase per cluster, larger clusters choosing first (no label used twice)."""
    n = len(tokens.phrases)
    df: Counter[str] = Counter()
    in_cluster: dict[int, Counter[str]] = {c: Counter() for c in clusters}
    for i, doc_phrases in enumerate(tokens.phrases):
        df.update(doc_phrases)
        c = int(assignment[i])
        if c in in_cluster:
            in_cluster[c].update(doc_phrases)
    sizes = Counter(int(c) for c in assignment)
    chosen: dict[int, str | None] = {}
    used: set[str] = set()
    for c in sorted(clusters, key=lambda c: (-sizes[c], c)):
        best: tuple[float, str] | None = None
        for phrase, inside in in_cluster[c].items():
            if inside < min(min_label_df, sizes[c]) or phrase in used or df[phrase] > 0.9 * n:
                continue
            coverage = inside / sizes[c]
            precision = inside / df[phrase]
            words = phrase.count(" ") + 1
            score = coverage * precision * (1.0 + length_bonus * (words - 1))
            key = (score, phrase)
            # Ties go to the alphabetically first phrase, so the label is deterministic.
            if best is None or key[0] > best[0] or (key[0] == best[0] and phrase < best[1]):
                best = key
        if best is None:
            chosen[c] = None
            continue
        used.add(best[1])
        chosen[c] = _display(best[1], tokens.surface)
    return chosen


def _display(key: str, surface: dict[str, Counter[str]]) -> str:
    spellings = surface[key]
    # The most frequent spelling; ties to the one with capitals (a proper name), then sorted.
    return min(spellings.items(), key=lambda kv: (-kv[1], kv[0] == kv[0].lower(), kv[0]))[0]


def _other(ids: list[Hashable]) -> Topic:
    return Topic(label=OTHER_LABEL, member_ids=tuple(ids), size=len(ids), other=True)


def topic_clusters(
    docs: Sequence[TopicDoc],
    *,
    max_topics: int = 8,
    min_size: int = 2,
    seed: int = 0,
    query: str = "",
    n_components: int = 50,
    min_df: int = 2,
    max_df: float = 0.9,
    max_phrase_words: int = 4,
    min_label_df: int = 2,
    length_bonus: float = 0.3,
) -> list[Topic]:
    """Cluster ``docs`` into at most ``max_topics`` labelled topics plus "Other topics".

    Every document is in exactly one topic. Topics come largest first (ties: the topic whose
    best-ranked member comes first); member ids keep the input (rank) order. The "Other topics"
    bucket — documents of clusters smaller than ``min_size`` or without any shared phrase — is
    last, and only present when non-empty. ``query``'s words are never labels on their own
    (every result contains them). Same input and ``seed`` → the same topics.

    ``n_components`` is the LSA dimension; ``min_df``/``max_df`` bound a feature's document
    frequency (count, share); ``max_phrase_words`` the label length; ``min_label_df`` how many
    of a cluster's documents must contain its label; ``length_bonus`` the preference for
    longer phrases.
    """
    if max_topics < 1:
        raise ValueError(f"max_topics must be at least 1, got {max_topics}")
    if min_size < 1:
        raise ValueError(f"min_size must be at least 1, got {min_size}")
    ids = [d.id for d in docs]
    if len(ids) < 2:
        return [_other(ids)] if ids else []
    excluded = frozenset(w.lower() for w in _WORD.findall(query))
    tokens = _tokenise(docs, max_phrase_words=max_phrase_words, excluded=excluded)
    matrix = _tfidf(tokens.terms, min_df=min_df, max_df=max_df)
    n = len(ids)
    k = min(max_topics, n // max(min_size, 1), n)
    if k < 2 or matrix.shape[1] < 2:
        return [_other(ids)]
    assignment = _cluster(matrix, k, n_components=n_components, seed=seed)
    # Documents with no feature at all cannot be placed by similarity: they belong nowhere.
    empty = np.asarray(matrix.getnnz(axis=1)) == 0
    assignment = np.where(empty, -1, assignment)
    members: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(assignment):
        members[int(c)].append(i)
    big = [c for c, m in members.items() if c >= 0 and len(m) >= min_size]
    labels = _labels(
        tokens, assignment, big, min_label_df=min_label_df, length_bonus=length_bonus
    )
    topics: list[tuple[int, Topic]] = []
    rest: list[int] = []
    for c, positions in members.items():
        label = labels.get(c)
        if label is None:
            rest.extend(positions)
            continue
        topics.append(
            (
                positions[0],
                Topic(
                    label=label,
                    member_ids=tuple(ids[i] for i in positions),
                    size=len(positions),
                ),
            )
        )
    result = [t for _, t in sorted(topics, key=lambda pt: (-pt[1].size, pt[0]))]
    if rest:
        result.append(_other([ids[i] for i in sorted(rest)]))
    return result
