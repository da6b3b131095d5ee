"""Topic clusters of one result list, each with a readable label (search-results clustering).

A query's top hits (their titles and snippets, already loaded) are organised into a few
labelled topics — "jaguar" → Cars · Big cats · Mac OS — and an "Other topics" bucket, the way
Vivisimo/Clusty, Carrot2 and Yippy do, so the diversity of a result list can be seen and browsed.

Pure library code (scikit-learn, scipy and numpy; no Django, no I/O), deterministic for a given
input and ``seed``. It is one algorithm, kept whole in one module past the house's 550-line
bound (tests/searchapp/test_architecture.py): its five steps share one token stream and one
vocabulary, and reading them in order is how the method is reviewed. The method:

1. Every document (title + text; the title counts ``title_weight`` times) is tokenised once into
   one stream of word ids with fragment boundaries at punctuation, so no phrase spans a clause.
   Words, stop words and a result's language in every script are ``searchapp.topics.words``
   (Chinese, Japanese kanji and Korean read in character bigrams, Thai, Lao, Khmer and Myanmar
   in bigrams of syllable-like clusters; each result's own language's stop words, from its
   record in ``searchapp.language_components``); a label is written as its words were
   (bigrams overlapping).
2. Features: TF-IDF weighted words (a light plural stem; with ``word_pairs`` also pairs of
   consecutive content words within a fragment, which measured worse on both collections: the
   phrases matter for labels, not for grouping snippets); sublinear term frequency,
   L2-normalised rows. With a ``background`` corpus (the app's stored documents,
   ``selectors.topics.background``) a word's IDF is the corpus's, not the list's: what is rare in
   general separates the senses of a query (+5.3 ARI on AMBIENT).
3. Clustering, with a background: average linkage on the rows' cosine distance cut at the
   fixed height ``link_threshold`` (``searchapp.topics.linkage``), the ``max_topics`` largest
   groups shown and the rest attached to the nearest of them (``attach_min``): a row depends on
   its own result and the corpus only, and the cut on the groups it is in, so results joining
   or leaving a list move only the topics they touch. Without a background (the
   list's own IDF moves anyway): normalised spectral clustering of the rows' cosine graph with
   ``max_topics`` eigenvectors, one truncated SVD (``searchapp.topics.spectral``), k-means on
   the embedding (k-means++ seeding from ``seed``); then the two clusters whose centred TF-IDF
   centroids are most alike are joined while that similarity is at least ``merge_threshold``
   (and, for a short list, the eigengap decides first).
4. Labels: candidate phrases are 1..``max_phrase_words`` words found in the results, inside one
   fragment, noun-phrase-like by ``searchapp.topics.labels`` (no verb form, number, date,
   by-line or stop word at an edge, no stop word inside but a name's "of", "and"...), not made
   of query words only, and with a background not made of words the whole corpus shares, nor
   cut from a longer phrase, the query's own name or a clause (``_cut``). Each cluster takes
   the phrase whose words best match its centroid (Lingo's label choice: each word weighed by
   the share of the cluster's documents holding it x its IDF) x the square root of the share
   of the cluster's documents containing the phrase x the share of its documents inside the
   cluster (``_centroid_match``), shown in its most frequent original spelling. Larger
   clusters choose first; no label is used twice; equal scores go by the phrase's words.
   With ``subtopics`` a large topic is split again the same way (``Topic.children``), from
   the list's tokens (its texts are not read again).
5. Clusters smaller than ``min_size``, or without any phrase shared by ``min_label_df`` of their
   documents, go to "Other topics", always last.

Defaults were chosen by measurement on AMBIENT (44 ambiguous queries x 100 web results) and
ODP-TR30 with bench/topics_semeval.py (SemEval-2013 Task 11 is the test set, run rarely),
using its paired comparison of a knob change on the same queries (one mean over 44 queries is
about ±6 ARI points wide); BENCHMARKS.md has the figures.

Everything after tokenising is numpy over the whole stream (n-gram keys are rolling 64-bit
hashes of word ids), which is what keeps 1,000 hits within the time budget (bench/).

References: Osiński & Weiss, "A concept-driven algorithm for clustering search results" (Lingo,
2005); Zamir & Etzioni, "Web document clustering: a feasibility demonstration" (STC, 1998);
Ng, Jordan & Weiss, "On spectral clustering: analysis and an algorithm" (2002); Navigli &
Vannella, SemEval-2013 Task 11 (measured in BENCHMARKS.md).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import sparse
from threadpoolctl import ThreadpoolController

from searchapp.topics import labels as topic_labels
from searchapp.topics import words as topic_words
from searchapp.topics.linkage import attach_to_nearest, linkage_clusters
from searchapp.topics.spectral import spectral_clusters

__all__ = [
    "OTHER_LABEL",
    "Background",
    "Topic",
    "TopicDoc",
    "place_results",
    "topic_clusters",
]

# Per word (lower case), the share of a background corpus's documents holding it (0 < share <= 1,
# smoothed by the caller so an unseen word is not 0): the app's own index, or in the benchmark
# the whole collection.
Background = Callable[[Sequence[str]], np.ndarray]

OTHER_LABEL = "Other topics"

_BOUNDARY = 0  # the word id of every fragment boundary (and of the gap between documents)
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd: the rolling n-gram hash is a bijection


@dataclass(frozen=True)
class TopicDoc:
    """One result: its id (returned in ``Topic.member_ids``), title, text (snippet) and
    language (ISO 639-1, ``Document.lang``; '' when unknown: guessed from the text)."""

    id: Hashable
    title: str
    text: str
    lang: str = ""


@dataclass(frozen=True)
class Topic:
    """A labelled topic: its members' ids in input (rank) order and their number."""

    label: str
    member_ids: tuple[Hashable, ...]
    size: int
    other: bool = False  # the "Other topics" bucket (always the last topic)
    # Sub-topics of a large topic (``topic_clusters(subtopics=True)``), the same way ordered;
    # empty when not asked for or when the topic does not split.
    children: tuple[Topic, ...] = ()


@dataclass(frozen=True)
class _Stream:
    words: list[str]  # the distinct lower-cased words (index 0: the boundary)
    tokens: np.ndarray  # int64 word ids, _BOUNDARY between fragments and documents
    doc: np.ndarray  # int64 document index of each token
    originals: list[str]  # the token as written (for labels' spelling)
    glue: dict[int, int]  # position -> how it joins the token before in a label, when not by
    # a space (topic_words.GLUE_*)
    feature: np.ndarray  # bool per token: a clustering feature (not an English stop word...)
    content: np.ndarray  # bool per token: may carry a label (not a stop word of its document's
    # language either)
    query: np.ndarray  # bool per word id: a word of the query
    # bool per word id: a form of a query word ("beagles", "cain's"): never a label alone (as
    # a feature it stays: taking it out cost 1.1 ARI on AMBIENT, within noise but not better)
    query_like: np.ndarray
    stem: np.ndarray  # int64 per word id: the id of its stem (plural folded)
    stem_words: list[str]  # per word id: its stem
    leading: np.ndarray  # bool per token: may start a label (content words, leading words)
    vocab: dict[str, int]  # word -> id
    form: np.ndarray  # int64 per word id: the id of its query form (_query_form)
    form_ids: dict[str, int]  # query form -> id
    title: np.ndarray  # bool per token: in its document's title (the first copy)
    # What is computed once per list and shared with its sub-topics' streams.
    cache: dict[str, np.ndarray] = field(default_factory=dict)


def _stem(word: str) -> str:
    # The lightest stemmer that folds the plurals that split a topic ("car"/"cars").
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _stems(words: list[str]) -> list[str]:
    """``_stem`` of every word; only the words ending in "s" are looked at in Python."""
    out = list(words)
    ends_s = np.fromiter(map(operator.methodcaller("endswith", "s"), words), bool, len(words))
    for i in np.flatnonzero(ends_s).tolist():
        out[i] = _stem(words[i])
    return out


def _query_form(word: str) -> str:
    return _stem(word.removesuffix("'s"))


def _tokenise(docs: Sequence[TopicDoc], *, title_weight: int, query: str) -> _Stream:
    glue: dict[int, int] = {}  # position -> how it joins the token before (not by a space)
    originals: list[str] = [""]
    title_spans: list[tuple[int, int]] = []
    for d in docs:
        title, title_glue = topic_words.split_words(d.title)
        title_spans.append((len(originals), len(originals) + len(title)))
        for _ in range(title_weight):
            if title_glue:
                glue.update((len(originals) + i, g) for i, g in title_glue.items())
            originals.extend(title)
            originals.append(".")
        text, text_glue = topic_words.split_words(d.text)
        if text_glue:
            glue.update((len(originals) + i, g) for i, g in text_glue.items())
        originals.extend(text)
        originals.append("")  # the gap between documents is a boundary too
    stream_text = "\x00".join(originals)
    # One lower() over the whole stream: a C loop, not one call per token.
    lowered = stream_text.lower().replace("\u2019", "'").split("\x00")
    if len(lowered) != len(originals):  # a token whose lower case holds a NUL: keep aligned
        lowered = [t.lower().replace("\u2019", "'") for t in originals]
    # Word ids in order of first occurrence; dict.fromkeys and map run in C.
    vocab = {w: i for i, w in enumerate(dict.fromkeys(lowered))}
    raw = np.fromiter(map(vocab.__getitem__, lowered), dtype=np.int64, count=len(lowered))
    # Document index per token: each document ends with its "" (the leading "" at 0 and the
    # first document's tokens are the first document's).
    ends = np.flatnonzero(raw == vocab[""])[1:]
    doc = np.searchsorted(ends, np.arange(len(raw)), side="left").astype(np.int64)
    distinct = list(vocab)
    boundary = np.array([not w or not (w[0].isalnum() or w[0] == "_") for w in distinct])
    tokens = np.where(boundary, _BOUNDARY, np.arange(len(distinct)) + 1)[raw]
    words = ["", *distinct]
    feature, content, leading = topic_words.content_flags(
        [d.lang for d in docs],
        [f"{d.title} {d.text}" for d in docs],
        words,
        tokens,
        doc,
    )
    stem_of = _stems(words)
    stems = {s: i for i, s in enumerate(dict.fromkeys(stem_of))}
    # A word's query form is its stem unless it ends in "'s" (the only case they differ).
    forms = [_query_form(w) if w.endswith("'s") else s for w, s in zip(words, stem_of, strict=True)]
    form_ids = {f: i for i, f in enumerate(dict.fromkeys(forms))}
    stream = _Stream(
        words=words,
        tokens=tokens,
        doc=doc,
        originals=originals,
        glue=glue,
        feature=feature,
        content=content,
        query=np.zeros(len(words), dtype=bool),
        query_like=np.zeros(len(words), dtype=bool),
        stem=np.fromiter(map(stems.__getitem__, stem_of), dtype=np.int64, count=len(words)),
        stem_words=stem_of,
        leading=leading,
        vocab={w: i for i, w in enumerate(words)},
        form=np.fromiter(map(form_ids.__getitem__, forms), dtype=np.int64, count=len(words)),
        form_ids=form_ids,
        title=_spans_mask(title_spans, len(tokens)),
    )
    return _with_query(stream, query)


def _spans_mask(spans: list[tuple[int, int]], n: int) -> np.ndarray:
    """True at the positions of the half-open ``spans``."""
    change = np.zeros(n + 1, dtype=np.int64)
    if spans:
        starts, ends = np.array(spans, dtype=np.int64).T
        np.add.at(change, starts, 1)
        np.add.at(change, ends, -1)
    return np.cumsum(change[:n]) > 0


def _with_query(stream: _Stream, query: str) -> _Stream:
    """``stream`` with ``query``'s words marked: "Beagles" and "Cain's" are the query
    "beagle", "cain" too (never a label alone)."""
    query_words = {w.lower() for w in topic_words.split_words(query)[0]}
    is_query = np.zeros(len(stream.words), dtype=bool)
    is_query[[stream.vocab[w] for w in query_words if w in stream.vocab]] = True
    forms = {_query_form(w) for w in query_words}
    query_like = np.isin(stream.form, [stream.form_ids[f] for f in forms if f in stream.form_ids])
    return replace(stream, query=is_query, query_like=query_like)


def _substream(stream: _Stream, members: np.ndarray, query: str) -> _Stream:
    """The stream of the documents ``members`` (indices, ascending) alone, with ``query``:
    what ``_tokenise`` gives for them (the same tokens, flags and words; word ids stay the
    whole list's), without reading their texts again (a sub-topic's split)."""
    keep = np.isin(stream.doc, members)
    keep[0] = True  # the leading boundary
    positions = np.flatnonzero(keep)
    new_position = np.full(len(stream.tokens), -1, dtype=np.int64)
    new_position[positions] = np.arange(len(positions))
    glue = {int(new_position[p]): g for p, g in stream.glue.items() if keep[p]}
    doc = np.searchsorted(members, stream.doc[positions]).astype(np.int64)
    doc[0] = 0
    return _with_query(
        replace(
            stream,
            tokens=stream.tokens[positions],
            doc=doc,
            originals=list(operator.itemgetter(*positions.tolist())(stream.originals)),
            glue=glue,
            feature=stream.feature[positions],
            content=stream.content[positions],
            leading=stream.leading[positions],
            title=stream.title[positions],
        ),
        query,
    )


def _incidence(
    doc: np.ndarray, key: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(doc, key) occurrences → unique keys, then the (doc, column, count) of each pair."""
    if not len(key):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    keys, column = np.unique(key, return_inverse=True)
    pair = doc * len(keys) + column
    pairs, counts = np.unique(pair, return_counts=True)
    return keys, np.stack([pairs // len(keys), pairs % len(keys)]), counts


def _features(
    stream: _Stream,
    n_docs: int,
    *,
    min_df: int,
    max_df: float,
    word_pairs: bool,
    background: Background | None,
) -> sparse.csr_matrix:
    """Sublinear TF-IDF rows (L2-normalised) over content stems and consecutive stem pairs;
    with ``background``, a stem's IDF is that of the background corpus (pairs keep the list's)."""
    tokens, doc = stream.tokens, stream.doc
    # Drop stop words (keeping boundaries) so "bank of america" pairs "bank" with "america".
    keep = stream.feature | (tokens == _BOUNDARY)
    # Query words are in every result: they would only pull everything together.
    keep &= ~stream.query[tokens]
    kept, kept_doc = tokens[keep], doc[keep]
    stems = stream.stem[kept]
    is_word = kept != _BOUNDARY
    n_stems = int(stream.stem.max()) + 1
    uni_key = stems[is_word]
    uni_doc = kept_doc[is_word]
    both = is_word[:-1] & is_word[1:]
    if not word_pairs:
        both[:] = False
    bi_key = n_stems + stems[:-1][both] * n_stems + stems[1:][both]
    bi_doc = kept_doc[:-1][both]
    keys, pairs, counts = _incidence(
        np.concatenate([uni_doc, bi_doc]), np.concatenate([uni_key, bi_key]), n_docs
    )
    if not len(keys):
        return sparse.csr_matrix((n_docs, 0))
    df = np.bincount(pairs[1], minlength=len(keys))
    usable = (df >= min_df) & (df <= max_df * n_docs)
    new_column = np.cumsum(usable) - 1
    sel = usable[pairs[1]]
    rows, cols = pairs[0][sel], new_column[pairs[1][sel]]
    idf = np.log((1.0 + n_docs) / (1.0 + df[usable])) + 1.0
    if background is not None:
        idf = _background_idf(stream, keys[usable], n_stems, idf, background)
    values = (1.0 + np.log(counts[sel])) * idf[cols]
    matrix = sparse.csr_matrix((values, (rows, cols)), shape=(n_docs, int(usable.sum())))
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)


def _background_idf(
    stream: _Stream, keys: np.ndarray, n_stems: int, idf: np.ndarray, background: Background
) -> np.ndarray:
    # What separates the senses of a query is how rare a word is in general, not in the list:
    # in a list about "jaguar", "cat" is in a third of the results but rare in the corpus, and
    # "price" the reverse.
    unigram = keys < n_stems
    out = idf.copy()
    out[unigram] = -np.log(np.clip(_stem_shares(stream, background)[keys[unigram]], 1e-9, 1.0))
    return out


def _stem_shares(stream: _Stream, background: Background) -> np.ndarray:
    """Per stem id, the background's share of documents holding a form of it (its singular
    and plurals, whether or not the list has them: a row must not move when another result
    brings "banks" beside "bank"), add-one smoothed once as the background smooths a word.
    Computed once per stream (a sub-topic's split shares its list's stems)."""
    cached = stream.cache.get("stem_shares")
    if cached is not None:
        return cached
    unit = float(background([""])[0])  # a word no document holds: one smoothing unit
    if not unit > 0:  # a background that does not smooth: its forms' shares, added
        unit = 0.0
    stems = list(dict.fromkeys(stream.stem_words))  # in stem id order
    # The forms _stem folds to a stem: itself, +"s" (unless _stem keeps that whole: "-ss",
    # "-us", "-is", "-ies", or short), and "-y" as "-ies".
    plural = [len(s) >= 3 and s[-1] not in "sui" and s[-2:] != "ie" for s in stems]
    ies = [len(s) >= 3 and s[-1] == "y" for s in stems]
    forms = [
        *stems,
        *(f"{s}s" for s, p in zip(stems, plural, strict=True) if p),
        *(f"{s[:-1]}ies" for s, y in zip(stems, ies, strict=True) if y),
    ]
    owner = np.concatenate([np.arange(len(stems)), np.flatnonzero(plural), np.flatnonzero(ies)])
    found = np.asarray(background(forms), dtype=float)
    total = np.zeros(len(stems))
    if unit:
        np.add.at(total, owner, found / unit - 1.0)  # the documents holding each form
        shares = unit * (1.0 + total)
    else:
        np.add.at(total, owner, found)
        shares = total
    stream.cache["stem_shares"] = shares
    return shares


@dataclass(frozen=True)
class _Phrases:
    incidence: sparse.csr_matrix  # documents x candidate phrases, 1 where a document has it
    first: np.ndarray  # per phrase: the stream position of one occurrence
    length: np.ndarray  # per phrase: its number of tokens
    words: np.ndarray  # per phrase: its number of words (a bigram continuing one counts half)
    starts: np.ndarray  # stream start position of every occurrence
    occurrence_column: np.ndarray  # the phrase of every occurrence (-1: not a candidate)


def _per_word(stream: _Stream, name: str, compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``compute(stream.words)``, once per list: its sub-topics' streams share the words."""
    found = stream.cache.get(name)
    if found is None:
        found = stream.cache[name] = np.asarray(compute(stream.words))
    return found


def _defects(stream: _Stream) -> tuple[np.ndarray, np.ndarray]:
    """Per token: may it not start or end a label; does it spoil a label it is inside
    (``searchapp.topics.labels``)."""
    tokens = stream.tokens
    edge = _per_word(stream, "edge", topic_labels.edge_words)[tokens]
    verbal = np.flatnonzero(_per_word(stream, "verbal", topic_labels.verbal_words)[tokens])
    # Only -ing/-ed words need their spelling looked at: capitalised they are names ("Reading
    # Festival"), but all in capitals a heading's words ("GILTS SEEN RISING").
    lowered = np.array(
        [(o.islower() or o.isupper()) for o in (stream.originals[i] for i in verbal.tolist())],
        dtype=bool,
    )
    edge[verbal[lowered]] = True
    inner_ok = _per_word(stream, "inner", topic_labels.inner_words)[tokens]
    reporting = _per_word(stream, "reporting", topic_labels.reporting_words)
    inner = (~stream.content & ~inner_ok) | reporting[tokens]
    # An article inside only after a name's function word ("Lord of the Rings"), never after
    # a verb ("chairs the planning committee").
    after_inner = np.concatenate([[False], inner_ok[:-1]])
    inner |= _per_word(stream, "article", topic_labels.article_words)[tokens] & ~after_inner
    # A past form written in lower case right after a word (not a function word) is a
    # clause's verb: "profit reflected reduced costs", "Foxley asked for hedges"; after an
    # article or a preposition it is an adjective ("the reduced costs") and may stay.
    past = verbal[lowered]
    past = past[_per_word(stream, "past", topic_labels.past_words)[tokens[past]]]
    past = past[past > 0]
    inner[past[stream.feature[past - 1]]] = True
    return edge, inner


def _phrases(stream: _Stream, n_docs: int, *, max_words: int, min_df: int) -> _Phrases:
    tokens, doc = stream.tokens, stream.doc
    n = len(tokens)
    content = stream.content
    leading = stream.leading
    topical = content & ~stream.query_like[tokens]
    bound_before = np.concatenate([[0], np.cumsum(tokens == _BOUNDARY)])
    topical_before = np.concatenate([[0], np.cumsum(topical)])
    # Overlapping bigrams (Chinese, Japanese kanji, Thai, Korean) count half a word each after
    # the first, so "亚洲杯小组赛" (5 bigrams) is a three-word label like "asian cup group".
    overlap = np.zeros(n, dtype=bool)
    overlap[[p for p, g in stream.glue.items() if g == topic_words.GLUE_OVERLAP]] = True
    overlap_before = np.concatenate([[0], np.cumsum(overlap)])
    edge_bad, inner_bad = _defects(stream)
    inner_before = np.concatenate([[0], np.cumsum(inner_bad)])
    all_keys, all_docs, all_starts, all_lengths, all_words = [], [], [], [], []
    key = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for length in range(1, (2 * max_words if overlap.any() else max_words) + 1):
            m = n - length + 1
            if m <= 0:
                break
            key = key[:m] * _HASH_MULTIPLIER + tokens[length - 1 :].astype(np.uint64)
            starts = np.arange(m)
            ends = starts + length
            words = length - 0.5 * (overlap_before[ends] - overlap_before[starts + 1])
            valid = (
                (words <= max_words)
                & leading[:m]
                & content[length - 1 :]
                & (bound_before[ends] == bound_before[starts])
                & (topical_before[ends] > topical_before[starts])
                & ~edge_bad[:m]
                & ~edge_bad[length - 1 :]
            )
            if length > 2:  # nothing but a name's function words inside
                valid &= inner_before[ends - 1] == inner_before[starts + 1]
            all_keys.append(key[valid] + np.uint64(length))  # lengths never share a key
            all_docs.append(doc[:m][valid])
            all_starts.append(starts[valid])
            all_lengths.append(np.full(int(valid.sum()), length))
            all_words.append(words[valid])
    occ_key = np.concatenate(all_keys) if all_keys else np.zeros(0, dtype=np.uint64)
    occ_doc = np.concatenate(all_docs) if all_docs else np.zeros(0, dtype=np.int64)
    occ_start = np.concatenate(all_starts) if all_starts else np.zeros(0, dtype=np.int64)
    occ_len = np.concatenate(all_lengths) if all_lengths else np.zeros(0, dtype=np.int64)
    occ_words = np.concatenate(all_words) if all_words else np.zeros(0)
    keys, inverse = np.unique(occ_key, return_inverse=True)
    pair, first_occurrence = np.unique(occ_doc * len(keys) + inverse, return_index=True)
    pair_doc, pair_col = pair // max(len(keys), 1), pair % max(len(keys), 1)
    df = np.bincount(pair_col, minlength=len(keys))
    usable = df >= min_df
    new_column = np.cumsum(usable) - 1
    sel = usable[pair_col]
    n_cols = int(usable.sum())
    incidence = sparse.csr_matrix(
        (np.ones(int(sel.sum())), (pair_doc[sel], new_column[pair_col[sel]])),
        shape=(n_docs, n_cols),
    )
    first = np.zeros(n_cols, dtype=np.int64)
    lengths = np.zeros(n_cols, dtype=np.int64)
    n_words = np.zeros(n_cols)
    # Reversed assignment: the earliest occurrence of each phrase is written last and wins.
    occ = first_occurrence[sel][::-1]
    first[new_column[pair_col[sel]][::-1]] = occ_start[occ]
    lengths[new_column[pair_col[sel]][::-1]] = occ_len[occ]
    n_words[new_column[pair_col[sel]][::-1]] = occ_words[occ]
    occurrence_column = np.where(usable[inverse], new_column[inverse], -1)
    return _Phrases(
        incidence=incidence,
        first=first,
        length=lengths,
        words=n_words,
        starts=occ_start,
        occurrence_column=occurrence_column,
    )


def _phrase_text(stream: _Stream, phrases: _Phrases, column: int) -> str:
    first = int(phrases.first[column])
    ids = stream.tokens[first : first + int(phrases.length[column])].tolist()
    return " ".join(stream.words[w] for w in ids)


def _spelling(
    stream: _Stream, phrases: _Phrases, column: int, starts: np.ndarray
) -> tuple[str, bool]:
    """The phrase as most often written; ties go to capitals (a name), then sorted; and
    whether that spelling is a heading's, all in capitals."""
    length = int(phrases.length[column])
    spellings = Counter(
        topic_words.join_label(
            stream.originals[s : s + length], [stream.glue.get(p, 0) for p in range(s, s + length)]
        )
        for s in starts
    )
    # A heading in capitals ("PALM OIL PRICES") is the worst spelling when the snippets have
    # another. Written anew: a word of the lexicon in lower case (the first capitalised), any
    # other word as a name, an acronym (four letters or fewer: "OPEC") in its capitals.
    best = min(
        spellings.items(),
        key=lambda kv: (_shouting(kv[0]), -kv[1], kv[0] == kv[0].lower(), kv[0]),
    )[0]
    heading = best.isupper() and any(c.isalpha() for c in best)
    if heading:
        words = [
            w.lower()
            if topic_labels.known_word(w) or w.lower() in topic_labels.INNER_WORDS
            else (w if len(w) <= 4 else w.capitalize())
            for w in best.split(" ")
        ]
        best = " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])
    return best, heading


def _misread(
    stream: _Stream,
    phrases: _Phrases,
    column: int,
    starts: np.ndarray,
    spelled: str,
    *,
    heading: bool = False,
) -> bool:
    """Does the phrase, where the results have it, cut a word written without spaces ("件系统"
    of "文件系统", "로그램에" of "프로그램에": the same n-gram overlaps its first or its last in
    four of five places), or cut a name in two ("Luca" of "Luca Bianchi",
    "Prime Minister Bettino", "Cross" of "Whitby Cross": a capitalised word after or before it
    in four of five places), or is its one
    lower-case word a verb after its subject ("Harbourline Shipping closes": a capitalised word
    before it in half of its places, or any word before it in a heading in capitals, "QUAKER
    OATS FILES SHELF REGISTRATION"; "prices" after "oil" is a noun) or before one object in
    half of them ("vaccine shows promise")?"""
    length = int(phrases.length[column])
    originals, n = stream.originals, len(stream.originals)
    if stream.glue and (
        _run_continues(stream, starts, length, before=True)
        or _run_continues(stream, starts, length, before=False)
    ):
        return True
    last = spelled.split(" ")[-1]

    def capitalised(position: int) -> bool:
        if not 0 <= position < n or stream.tokens[position] == _BOUNDARY:
            return False
        word = originals[position]
        return word[:1].isupper() and not word.isupper()

    if last[:1].isupper() and not last.isupper():
        after = sum(capitalised(int(s) + length) for s in starts)
        if after >= 0.8 * len(starts):
            return True
    first = spelled.split(" ")[0]
    if first[:1].isupper() and not first.isupper():  # "Cross" of "Whitby Cross"
        # Its places in a heading in capitals say nothing of names ("NEW YORK COFFEE").
        written = [int(s) for s in starts if not originals[int(s)].isupper()]
        before = sum(capitalised(s - 1) for s in written)
        if written and before >= 0.8 * len(written):
            return True

    def heading_subject(position: int) -> bool:
        # In a heading in capitals ("OLIVER'S STORES FILES CHAPTER 11") any word before it.
        before = position - 1
        return (
            originals[position].isupper()
            and before >= 0
            and stream.tokens[before] != _BOUNDARY
            and originals[before].isupper()
        )

    lower = spelled.islower() or heading  # a heading's word is read in lower case
    if length == 1 and lower and topic_labels.verb_s_form(spelled.lower()):
        before = sum(capitalised(int(s) - 1) or heading_subject(int(s)) for s in starts)
        # Or always with the same object: "shows" of "vaccine shows promise".
        objects = Counter(
            stream.tokens[int(s) + 1]
            for s in starts
            if int(s) + 1 < n and stream.content[int(s) + 1] and originals[int(s) + 1].islower()
        )
        same = objects.most_common(1)[0][1] if objects else 0
        return before >= 0.5 * len(starts) or same >= 0.5 * len(starts)
    return False


def _run_continues(stream: _Stream, starts: np.ndarray, length: int, *, before: bool) -> bool:
    """In four of five of the phrase's places (``starts``, ``length`` tokens), is the n-gram
    right before it (``before``) or right after it the same one, overlapping the phrase: the
    phrase starts or ends inside a word? Before a Korean phrase any overlapping n-gram will do:
    its words start after a space, while the particles after a noun vary ("프로그램" of
    "프로그램에", "프로그램을" is whole)."""
    n = len(stream.tokens)
    glue = stream.glue
    # Where the phrase meets its neighbour (the position whose glue joins the two), and the
    # neighbour's position: the n-gram before a start is at start - 1, the one after the end
    # at the end itself.
    seams = (starts if before else starts + length).tolist()
    at = [
        p - 1 if before else p
        for p in seams
        if 0 < p < n and glue.get(p) == topic_words.GLUE_OVERLAP
    ]
    if len(at) < 0.8 * len(starts):
        return False
    if before and topic_words.spaced_ngram(stream.originals[int(starts[0])]):
        return True
    return Counter(stream.tokens[at].tolist()).most_common(1)[0][1] >= 0.8 * len(starts)


# Words before a verb's base form ("to raise crude oil postings", "will cut rates") and after
# a verb that takes an object ("insurers estimate the damage").
_BEFORE_VERB = frozenset(
    ["to", "will", "would", "could", "should", "may", "might", "must", "can", "cannot"]
)
_DETERMINERS = frozenset(
    ["the", "a", "an", "its", "their", "his", "her", "this", "these", "those", "our", "your", "my"]
)


def _before_verb_words(words: list[str]) -> np.ndarray:
    return np.fromiter(map(_BEFORE_VERB.__contains__, words), bool, len(words))


def _determiner_words(words: list[str]) -> np.ndarray:
    return np.fromiter(map(_DETERMINERS.__contains__, words), bool, len(words))


def _cut(
    stream: _Stream,
    phrases: _Phrases,
    column: int,
    starts: np.ndarray,
    spelled: str,
    *,
    heading: bool = False,
) -> bool:
    """Is the phrase, where the results have it, a piece cut from a longer phrase or a clause?

    * Cut before its head: in four of five places the same word follows it, a lower-case word
      that may end a label and may carry on a noun phrase (not a preposition, nor a word the
      lexicon has only as a verb or adverb), and its own last word is in lower case
      ("researchers map deep sea" of "... deep sea vents", "Mighty Mouse episode" of "...
      episode guides"; not "solar farm" of "solar farm near Upton", nor "cricket club" of
      "cricket club appoints"). A name may be followed by the same word ("Kawasaki Racing
      team"): it is whole.
    * Cut out of the query's own name: it starts with a word of the query and in four of five
      places another word of the query comes right before it ("Alive Dimensions" of "Dead or
      Alive Dimensions", "Kid Biography" of "Billy the Kid Biography").
    * A verb and its object: its first word, in lower case, is one the lexicon has as a verb
      and comes after "to" or a modal in half of its places ("raise crude oil postings",
      "cut rates"), or its last word is such a verb and a determiner follows it in half of its
      places ("Insurers estimate the damage"), or it comes after the same lower-case word in
      four of five places ("map deep sea vents" of "researchers map deep sea vents")."""
    length = int(phrases.length[column])
    tokens, originals, n = stream.tokens, stream.originals, len(stream.tokens)
    words = spelled.split(" ")
    edge = _per_word(stream, "edge", topic_labels.edge_words)
    before_verb = _per_word(stream, "before_verb", _before_verb_words)
    determiner = _per_word(stream, "determiner", _determiner_words)

    def around(offset: int) -> tuple[np.ndarray, np.ndarray]:
        """The word at ``offset`` from each place (the boundary beyond the stream), and where."""
        position = starts + offset
        inside = (position >= 0) & (position < n)
        position = np.clip(position, 0, n - 1)
        return np.where(inside, tokens[position], _BOUNDARY), position

    def most_common(found: np.ndarray) -> tuple[int, int]:
        values, counts = np.unique(found, return_counts=True)
        top = int(np.argmax(counts))
        return int(values[top]), int(counts[top])

    after, after_at = around(length)
    following, times = most_common(after)
    place = int(after_at[np.argmax(after == following)])
    if (
        following != _BOUNDARY
        and times >= 0.8 * len(starts)
        and (words[-1].islower() or heading)
        and stream.content[place]
        and not edge[following]
        and originals[place][:1].islower()
        and not topic_labels.continues_no_noun_phrase(originals[place].lower())
    ):
        return True
    before, before_at = around(-1)
    after_query = int(stream.query[before].sum())
    if stream.query_like[tokens[int(starts[0])]] and after_query >= 0.8 * len(starts):
        return True
    lower = [w.islower() or heading for w in words]
    if lower[0] and topic_labels.may_be_verb(words[0].lower()):
        if before_verb[before].sum() >= 0.5 * len(starts):
            return True
        # Or after the same lower-case word, its subject ("map deep sea vents" of
        # "researchers map deep sea vents"); not after a word the lexicon has as a verb: the
        # phrase is then its object ("wind project" of "... plans wind project near Upton").
        subject, times = most_common(before)
        place = int(before_at[np.argmax(before == subject)])
        if (
            subject != _BOUNDARY
            and times >= 0.8 * len(starts)
            and stream.content[place]
            and originals[place].islower()
            and not topic_labels.may_be_verb(originals[place].lower())
        ):
            return True
    return (
        len(words) > 1
        and lower[-1]
        and topic_labels.may_be_verb(words[-1].lower())
        and determiner[after].sum() >= 0.5 * len(starts)
    )


def _shouting(text: str) -> bool:
    return text.isupper() and any(len(w) > 4 for w in text.split(" "))


def _corpus_wide(
    stream: _Stream, phrases: _Phrases, background: Background, max_share: float
) -> np.ndarray:
    """Per phrase: is every one of its content words, or its first word, common to the whole
    background corpus (in more than ``max_share`` of it: "pct", "Reuters")? A common last
    word after a rarer one is a noun phrase's head, which its modifier makes specific: "wind
    project" where "project" is in a quarter of the demo corpus (measured: the judged labels
    gained three topics named by it, the collections' figures unchanged;
    docs/decisions/topic-labels.md)."""
    common = _per_word(stream, "background", background) > max_share
    common_tok = common[stream.tokens] | ~stream.content | stream.query_like[stream.tokens]
    before = np.concatenate([[0], np.cumsum(~common_tok)])
    ends = phrases.first + phrases.length
    # A query word first is no defect ("energy prices" for the query "energy"): every result
    # holds it, however common it is in the corpus.
    common_edge = common & ~stream.query_like
    edge = common_edge[stream.tokens[phrases.first]]
    return edge | (before[ends] == before[phrases.first])


def _centroid_match(
    stream: _Stream,
    phrases: _Phrases,
    indicator: sparse.csr_matrix,
    sizes: np.ndarray,
    background: Background | None,
    columns: np.ndarray,
) -> np.ndarray:
    """Per cluster and phrase of ``columns``, how well the phrase matches the cluster's
    centroid (Lingo's label choice, Osiński & Weiss 2005): the cosine of the phrase's words (a
    unit vector over its content stems) with the cluster's centroid, each stem weighed by the
    share of the cluster's results holding it times its IDF (the background corpus's when
    given, else the list's). A query word counts by its share alone (every result has it: IDF
    says nothing).

    A phrase's words say more about what a topic's results share than the places the phrase
    occurs whole: against the former score (the share of the cluster's results holding the
    whole phrase x the share of its holders inside the cluster), the centroid alone names
    more gold subtopics (bench/topics_labels.py: SemEval-2013 0.518 -> 0.640, AMBIENT 0.549
    -> 0.590; docs/decisions/topic-labels.md)."""
    n_docs, n_clusters = indicator.shape[1], indicator.shape[0]
    tokens, doc = stream.tokens, stream.doc
    n_stems = int(stream.stem.max()) + 1
    first, length = phrases.first[columns], phrases.length[columns]
    # The stems of the phrases scored: only their documents are counted.
    needed = np.zeros(n_stems, dtype=bool)
    for offset in range(int(length.max(initial=0))):
        position = first + np.minimum(offset, length - 1)
        needed[stream.stem[tokens[position]]] = True
    word = stream.content & needed[stream.stem[tokens]]  # content words only (no boundary)
    # Which documents hold each stem: the repeats summed in C, then counted once (a fifth of
    # the time of np.unique over the pairs).
    holds = sparse.csr_matrix(
        (np.ones(int(word.sum())), (doc[word], stream.stem[tokens[word]])),
        shape=(n_docs, n_stems),
    )
    holds.sum_duplicates()
    holds.data[:] = 1.0
    share = np.asarray((indicator @ holds).todense()) / np.maximum(sizes, 1)[:, None]
    if background is not None:
        idf = -np.log(np.clip(_stem_shares(stream, background), 1e-9, 1.0))
    else:
        list_df = np.asarray(holds.sum(axis=0)).ravel()
        idf = np.log((1.0 + n_docs) / (1.0 + list_df)) + 1.0
    query_stem = np.zeros(n_stems, dtype=bool)
    query_stem[stream.stem[stream.query_like]] = True
    idf = np.where(query_stem, 1.0, idf)
    weight = share * idf[None, :]  # clusters x stems
    # A bigram continuing an overlapping one (Chinese, Thai...) is half a word, as in a
    # phrase's length (_phrases).
    overlap = np.zeros(len(tokens))
    overlap[[p for p, g in stream.glue.items() if g == topic_words.GLUE_OVERLAP]] = 0.5
    score = np.zeros((n_clusters, len(columns)))
    count = np.zeros(len(columns))
    for offset in range(int(length.max(initial=0))):
        inside = offset < length
        position = np.where(inside, first + offset, 0)
        counted = inside & stream.content[position]
        part = np.where(counted, 1.0 - (overlap[position] if offset else 0.0), 0.0)
        score += part[None, :] * weight[:, stream.stem[tokens[position]]]
        count += part
    return score / np.sqrt(np.maximum(count, 1.0))[None, :]


def _labels(
    stream: _Stream,
    phrases: _Phrases,
    assignment: np.ndarray,
    clusters: list[int],
    kn: _Knobs,
) -> dict[int, str | None]:
    if not clusters or phrases.incidence.shape[1] == 0:
        return dict.fromkeys(clusters)
    n = len(assignment)
    index = {c: i for i, c in enumerate(clusters)}
    rows = [index.get(int(c), -1) for c in assignment]
    member = np.asarray(rows) >= 0
    indicator = sparse.csr_matrix(
        (np.ones(int(member.sum())), (np.asarray(rows)[member], np.flatnonzero(member))),
        shape=(len(clusters), n),
    )
    inside = np.asarray((indicator @ phrases.incidence).todense())  # clusters x phrases
    df = np.asarray(phrases.incidence.sum(axis=0)).ravel()
    sizes = np.asarray(indicator.sum(axis=1)).ravel()
    # A label must be shared (min_label_df documents, or all of a smaller cluster) and must
    # not describe nearly everything (a phrase in 90% of the results names no topic).
    enough = inside >= np.minimum(kn.min_label_df, sizes)[:, None]
    allowed = df <= kn.max_label_share * n
    if kn.background is not None:
        allowed &= ~_corpus_wide(stream, phrases, kn.background, kn.max_background_share)
    valid = enough & allowed[None, :]
    columns = np.flatnonzero(valid.any(axis=0))  # only these are scored
    # How well the phrase's words match the cluster's centroid (Lingo), x the geometric mean
    # of the former score's two shares: of the phrase's results inside the cluster (a phrase
    # the other topics hold as well names none of them) and of the cluster's results holding
    # the whole phrase (a long phrase of the topic's words that half of its results hold names
    # half of the topic: "dealer showroom offers" for car reviews of dealers and of engines).
    # bench/topics_labels.py, gold subtopics named, SemEval-2013 / AMBIENT (before: 0.518 /
    # 0.549): x precision**0.5 x coverage**(1/3) 0.617 / 0.590, x (precision x coverage)**0.5
    # 0.585 / 0.585. Labels are no longer than before with the square root (1.80 / 1.61 words
    # against 1.74 / 1.76); the weaker root labels a topic by what half of it holds.
    precision = inside[:, columns] / np.maximum(df[columns], 1)[None, :]
    coverage = inside[:, columns] / np.maximum(sizes, 1)[:, None]
    score = np.full(inside.shape, -1.0)
    score[:, columns] = np.where(
        valid[:, columns],
        _centroid_match(stream, phrases, indicator, sizes, kn.background, columns)
        * np.sqrt(precision * coverage),
        -1.0,
    )
    chosen: dict[int, str | None] = {}
    used: set[str] = set(kn.taken)
    # A phrase's spelling and whether it reads as a label depend on the phrase alone: judged
    # once, however many clusters have it among their best.
    judged: dict[int, tuple[str, bool]] = {}
    texts: dict[int, str] = {}

    def text(column: int) -> str:
        if column not in texts:
            texts[column] = _phrase_text(stream, phrases, column)
        return texts[column]

    for i in sorted(range(len(clusters)), key=lambda i: (-sizes[i], clusters[i])):
        label = None
        for column in _best_first(score[i], text):
            if score[i, column] < 0:
                break
            if column not in judged:
                judged[column] = _judged(stream, phrases, column)
            spelled, reads_as_label = judged[column]
            if reads_as_label and spelled.lower() not in used:
                label = spelled
                break
        if label is not None:
            used.add(label.lower())
        chosen[clusters[i]] = label
    return chosen


def _best_first(scores: np.ndarray, text: Callable[[int], str]) -> Iterator[int]:
    """The 50 best-scored columns, best first; equal scores in the order of the phrases' words
    (``text``), which, unlike the columns' (hashes of word ids numbered as the list runs), no
    other result moves. Lazily: a run of equal scores is ordered only when it is reached, so
    a phrase's words are spelled out only where its score ties with another's, and only as far
    as the caller reads."""
    best = np.argsort(-scores, kind="stable")[:50]
    columns, values = best.tolist(), scores[best].tolist()
    start = 0
    while start < len(columns):
        end = start + 1
        while end < len(columns) and values[end] == values[start]:
            end += 1
        run = columns[start:end]
        if len(run) > 1:
            run.sort(key=text)
        yield from run
        start = end


def _judged(stream: _Stream, phrases: _Phrases, column: int) -> tuple[str, bool]:
    """The phrase as most often written, and whether it reads as a label (not a clause, not
    misread, not cut from a longer phrase)."""
    starts = phrases.starts[phrases.occurrence_column == column]
    spelled, heading = _spelling(stream, phrases, column, starts)
    reads_as_label = (
        not topic_labels.reads_as_clause(spelled, heading=heading)
        and not _misread(stream, phrases, column, starts, spelled, heading=heading)
        and not _cut(stream, phrases, column, starts, spelled, heading=heading)
    )
    return spelled, reads_as_label


_threadpools: ThreadpoolController | None = None


def _one_thread() -> object:
    """BLAS and OpenMP limited to one thread: the budget is one core, and on a busy two-core
    machine their thread pools made a 1,000-hit clustering twice as slow."""
    global _threadpools
    if _threadpools is None:  # inspecting the loaded libraries costs a millisecond: once
        _threadpools = ThreadpoolController()
    return _threadpools.limit(limits=1)


def _other(ids: list[Hashable]) -> Topic:
    return Topic(label=OTHER_LABEL, member_ids=tuple(ids), size=len(ids), other=True)


def topic_clusters(
    docs: Sequence[TopicDoc],
    *,
    max_topics: int = 8,
    min_size: int = 2,
    seed: int = 0,
    query: str = "",
    background: Background | None = None,
    min_df: int | None = None,
    max_df: float = 0.9,
    title_weight: int = 2,
    max_phrase_words: int = 4,
    min_label_df: int = 2,
    max_label_share: float = 0.9,
    max_background_share: float = 0.2,
    n_init: int | None = None,
    word_pairs: bool = False,
    merge_threshold: float = 0.1,
    eigengap: bool | None = None,
    subtopics: bool = False,
    power_iterations: int = 32,
    method: str | None = None,
    link_threshold: float = 0.98,
    attach_min: float = 0.05,
) -> list[Topic]:
    """Cluster ``docs`` into at most ``max_topics`` labelled topics plus "Other topics".

    Every document is in exactly one topic. Topics come largest first (ties: the topic whose
    best-ranked member comes first); member ids keep the input (rank) order. The "Other topics"
    bucket — documents of clusters smaller than ``min_size`` or without a label, and documents
    with no usable word — is last, and only present when non-empty. ``query``'s words are never
    a label on their own and do not count as features (every result contains them). Same input
    and ``seed`` → the same topics.

    ``background`` gives each word's share of a background corpus's documents (the app's own
    index): features are then weighted by the background's IDF, and a label whose every word
    is in more than ``max_background_share`` of the background (something the whole corpus
    shares whatever the query: "pct", "Reuters"; 0.2, measured in docs/decisions/topic-labels.md)
    is never chosen.

    Knobs: ``min_df``/``max_df`` a feature's document frequency bounds (a count, a share);
    ``title_weight`` how many times the title counts; ``max_phrase_words`` the longest label;
    ``min_label_df`` how many of a cluster's documents must contain its label;
    ``max_label_share`` the largest share of all the results a label may appear in;
    ``word_pairs`` adds consecutive word pairs to the features; ``n_init`` the k-means
    restarts (default 10 up to 300 results, else 3);
    ``merge_threshold`` the cosine of two clusters' centred centroids at which they are joined
    (above 1: never), which decides how many of the ``max_topics`` there are; ``eigengap``
    whether the largest gap in the spectrum picks the number of clusters first (None: when
    there are fewer than five results per possible topic); ``subtopics`` splits every topic
    of at least ``SUBTOPIC_MIN`` results and a quarter of the list again (at most
    ``SUBTOPIC_MAX`` sub-topics, the parent's words taken as the query; its best-ranked
    ``SUBTOPIC_LINK_MAX`` results clustered, the rest placed by the nearest sub-topic), in
    ``Topic.children``;
    ``power_iterations`` those of the randomized SVD (``topic_spectral.spectral_clusters``): 32
    instead of 4 keeps a list's topics where they were when a few results join or leave it
    (Reuters, 4 more results: ARI on the common ones 69.9 -> 78.5; BENCHMARKS.md).
    ``method`` "linkage" or "spectral" (None: linkage with a ``background``, else spectral);
    ``link_threshold`` the mean cosine distance at which average linkage stops merging (lower
    when that leaves fewer than ``max_topics`` groups in a list of five results per topic or
    more); ``attach_min`` the cosine to a shown topic's centroid at which a result of a smaller
    group joins it; ``min_df`` defaults to 1 for linkage (every word: a result's row is its
    own) and 2 for spectral. Linkage: Reuters lists of 100, 4 results added or removed, ARI on
    the results both hold 87.5 / 84.8 (spectral 78.5 / 81.6); AMBIENT ARI 61.0 (spectral 64.6,
    a paired difference within noise); BENCHMARKS.md.
    """
    if max_topics < 1:
        raise ValueError(f"max_topics must be at least 1, got {max_topics}")
    if min_size < 1:
        raise ValueError(f"min_size must be at least 1, got {min_size}")
    if max_phrase_words < 1:
        raise ValueError(f"max_phrase_words must be at least 1, got {max_phrase_words}")
    if method is None:
        # Linkage needs a space that does not depend on the list, so the corpus's IDF; without
        # a background (a small corpus, tests) the list's own IDF moves anyway, and spectral
        # clustering separates its groups better (the planted-topic and language tests).
        method = "linkage" if background is not None else "spectral"
    if method not in ("linkage", "spectral"):
        raise ValueError(f"method must be 'linkage' or 'spectral', got {method!r}")
    if min_df is None:
        # Linkage: every word a result has, so its row does not depend on the rest of the list
        # (with 2, four results leaving a Reuters list moved its topics to an ARI of 75.9 on
        # the results both held, with 1 to 85.8; AMBIENT -1.2 ARI, within noise).
        min_df = 1 if method == "linkage" else 2
    ids = [d.id for d in docs]
    if len(ids) < 2:
        return [_other(ids)] if ids else []
    with _one_thread():  # type: ignore[attr-defined]
        knobs = _Knobs(
            max_topics=max_topics,
            min_size=min_size,
            seed=seed,
            query=query,
            background=background,
            min_df=min_df,
            max_df=max_df,
            title_weight=title_weight,
            max_phrase_words=max_phrase_words,
            min_label_df=min_label_df,
            max_label_share=max_label_share,
            max_background_share=max_background_share,
            n_init=n_init,
            word_pairs=word_pairs,
            merge_threshold=merge_threshold,
            eigengap=eigengap,
            power_iterations=power_iterations,
            method=method,
            link_threshold=link_threshold,
            attach_min=attach_min,
        )
        stream = _tokenise(docs, title_weight=title_weight, query=query)
        topics = _topic_clusters(stream, ids, knobs)
        return _with_subtopics(stream, ids, topics, knobs) if subtopics else topics


def place_results(
    docs: Sequence[TopicDoc],
    placed: Sequence[int | None],
    *,
    query: str = "",
    background: Background | None = None,
    attach_min: float = 0.05,
    title_weight: int = 2,
    max_df: float = 0.9,
) -> list[int]:
    """Where the new results of a list go among groups its other results already hold.

    ``placed[i]`` is result ``i``'s group (an int >= 0), -1 for one that is in no group a
    result may join ("Other topics"), or None for a new result. Each new result goes to the
    group whose centroid (the sum of its results' rows, unit length) has the highest cosine
    with its row, when that cosine is at least ``attach_min``, else -1; the others come back
    as given. The rows are those of the linkage method (sublinear TF-IDF over every word a
    result has, weighed by ``background``'s IDF when given): the same space and the same
    ``attach_min`` by which ``topic_clusters`` lets a result of a small group join a topic.
    """
    if len(placed) != len(docs):
        raise ValueError(f"placed has {len(placed)} entries for {len(docs)} results")
    groups = [g for g in placed if g is not None]
    if any(g < -1 for g in groups):
        raise ValueError("a placed group must be -1 or at least 0")
    out = [-1 if g is None else g for g in placed]
    new = [i for i, g in enumerate(placed) if g is None]
    kept = sorted({g for g in groups if g >= 0})
    if not new or not kept:
        return out
    with _one_thread():  # type: ignore[attr-defined]
        stream = _tokenise(docs, title_weight=title_weight, query=query)
        matrix = _features(
            stream, len(docs), min_df=1, max_df=max_df, word_pairs=False, background=background
        )
        # attach_to_nearest moves results outside the kept groups (and not -1): the new ones
        # get a group of their own, the "Other topics" ones one that is never moved.
        waiting, other = kept[-1] + 1, kept[-1] + 2
        assignment = np.array(
            [waiting if g is None else (other if g == -1 else g) for g in placed], dtype=np.int64
        )
        if matrix.shape[1]:
            assignment = attach_to_nearest(matrix, assignment, kept, attach_min)
    for i in new:
        out[i] = int(assignment[i]) if assignment[i] < waiting else -1
    return out


SUBTOPIC_MIN = 20
SUBTOPIC_MAX = 4
# A sub-topic split clusters at most this many of the topic's best-ranked results (the rest
# join the nearest sub-topic): a 936-result topic of a 1,000-hit list cost 50 ms to split.
SUBTOPIC_LINK_MAX = 400


def _with_subtopics(
    stream: _Stream, ids: list[Hashable], topics: list[Topic], kn: _Knobs
) -> list[Topic]:
    index = {d: i for i, d in enumerate(ids)}
    shown = frozenset(t.label.lower() for t in topics if not t.other)
    out = []
    for topic in topics:
        if topic.other or topic.size < max(SUBTOPIC_MIN, len(ids) / 4):
            out.append(topic)
            continue
        inner = replace(
            kn,
            max_topics=min(SUBTOPIC_MAX, kn.max_topics),
            query=f"{kn.query} {topic.label}",
            taken=shown,
            link_max=SUBTOPIC_LINK_MAX,
            within_topic=True,
        )
        members = np.array(sorted(index[i] for i in topic.member_ids), dtype=np.int64)
        children = _topic_clusters(
            _substream(stream, members, inner.query), [ids[i] for i in members], inner
        )
        if sum(not c.other for c in children) >= 2:
            topic = replace(topic, children=tuple(children))
        out.append(topic)
    return out


@dataclass(frozen=True)
class _Knobs:
    max_topics: int
    min_size: int
    seed: int
    query: str
    background: Background | None
    min_df: int
    max_df: float
    title_weight: int
    max_phrase_words: int
    min_label_df: int
    max_label_share: float
    max_background_share: float
    n_init: int | None
    word_pairs: bool
    merge_threshold: float
    eigengap: bool | None
    power_iterations: int
    method: str
    link_threshold: float
    attach_min: float
    # Labels already shown (a sub-topic's never repeats a topic's: "OPEC" beside "OPEC").
    taken: frozenset[str] = frozenset()
    # Linkage: how many of the best-ranked results are clustered (None: all; the rest join
    # the nearest topic).
    link_max: int | None = None
    # Splitting a topic into sub-topics (its label is in the query).
    within_topic: bool = False


def _spectral(matrix: sparse.csr_matrix, k: int, kn: _Knobs) -> np.ndarray:
    n = matrix.shape[0]
    n_init = kn.n_init
    if n_init is None:
        # More k-means restarts where they are cheap: +1.6 F1 (±1.3) on AMBIENT's 100-result
        # lists for 10 instead of 3; a 1,000-hit list keeps 3 for the time budget.
        n_init = 10 if n <= 300 else 3
    return spectral_clusters(
        matrix,
        k,
        seed=kn.seed,
        n_init=n_init,
        merge_threshold=kn.merge_threshold,
        n_iter=kn.power_iterations,
        # Few results per possible topic: k eigenvectors are not all meaningful, and the
        # largest eigengap says how many are (AMBIENT's 100-result lists: -4.7 ARI with it).
        eigengap=kn.eigengap if kn.eigengap is not None else n < 5 * kn.max_topics,
    )


# A pair of successive title words in at least this share of a topic's titles is its story.
SAME_STORY_SHARE = 0.8


def _lower_or_shouted(word: str) -> bool:
    return word[:1].islower() or (len(word) > 1 and word.isupper())


def _same_story(
    stream: _Stream, assignment: np.ndarray, big: list[int], kn: _Knobs
) -> tuple[np.ndarray, list[int]]:
    """Topics that tell one story are one topic: when two topics' titles share a pair of
    successive content words (not common to the whole background corpus, nor the query's but
    in a topic's split) in ``SAME_STORY_SHARE`` of each topic's results, and their titles
    differ by names alone, the smaller joins the larger. Their texts differ (the demo
    corpus's "Storm brings flooding to ..." split eight ways by the sentences of their
    snippets), and each part could only be named by what tells it from the others: a town, a
    company, a detail."""
    if len(big) < 2:
        return assignment, big
    tokens, doc_of = stream.tokens, stream.doc
    named = stream.content & stream.title & (tokens != _BOUNDARY)
    # A word in capitals counts as lower case: a headline in capitals ("OPEC SEES HIGHER
    # PRICES") cannot tell its names from its other words.
    at_named = np.flatnonzero(named)
    lower = np.zeros(len(tokens), dtype=bool)
    lower[at_named] = np.fromiter(
        (_lower_or_shouted(stream.originals[i]) for i in at_named.tolist()), bool, len(at_named)
    )
    title_words = np.flatnonzero(named & ~stream.query_like[tokens])
    # In a topic's split, the query holds the topic's label, which its titles share by
    # construction ("Energy prices in Upton rise", "... in Cross rise"): there the query's
    # words count in a story. Not at the top: across a query's senses, titles often name the
    # query beside the same word (SemEval-2013 lost 7.7 ARI).
    word_ok = named if kn.within_topic else named & ~stream.query_like[tokens]
    if kn.background is not None:
        common = _per_word(stream, "background", kn.background) > kn.max_background_share
        word_ok &= ~common[tokens]
    # Successive such words of one title, whatever stands between them (stop words, numbers,
    # the query: "Brightfield Energy to cut 206 jobs" gives "Brightfield cut", "cut jobs");
    # and the same of its lower-case words, its names skipped too ("Energy prices in Upton
    # rise" gives "prices rise").
    every = np.flatnonzero(word_ok)
    n_stems, n_docs = int(stream.stem.max()) + 1, int(doc_of[-1]) + 1
    n_keys = n_stems * n_stems
    keys, docs = [], []
    for at in (every, every[lower[every]]):
        first = np.flatnonzero(doc_of[at[:-1]] == doc_of[at[1:]])
        keys.append(stream.stem[tokens[at[first]]] * n_stems + stream.stem[tokens[at[first + 1]]])
        docs.append(doc_of[at[first]])
    key, doc = np.concatenate(keys), np.concatenate(docs)
    if not len(key):
        return assignment, big
    cluster = assignment[doc]
    in_big = np.isin(cluster, big)
    # Each (topic, pair) once per title: how many of the topic's titles hold the pair.
    held = np.unique((cluster[in_big] * n_keys + key[in_big]) * n_docs + doc[in_big]) // n_docs
    code, counts = np.unique(held, return_counts=True)
    sizes = np.bincount(assignment[assignment >= 0], minlength=max(big) + 1)
    code = code[counts >= SAME_STORY_SHARE * sizes[code // n_keys]]
    story_key = code % n_keys
    shared_keys, topics_told = np.unique(story_key, return_counts=True)
    code = code[np.isin(story_key, shared_keys[topics_told >= 2])]  # a story of two topics
    if not len(code):
        return assignment, big
    story_topic, story_key = code // n_keys, code % n_keys
    # Only topics whose titles differ by names alone: a lower-case word beyond its topic's
    # story words, in two or more of its titles and in no other topic's, tells one kind of
    # story from another ("saloon motor car piston" against "... showroom"); a name tells only
    # where it happened, and a word every topic has ("corrected") tells nothing.
    own_at = title_words[lower[title_words]]
    own_topic, own_stem = assignment[doc_of[own_at]], stream.stem[tokens[own_at]]
    told = np.concatenate(
        [story_topic * n_stems + story_key // n_stems, story_topic * n_stems + story_key % n_stems]
    )
    keep = (own_topic >= 0) & ~np.isin(own_topic * n_stems + own_stem, told)
    own_at, own_topic, own_stem = own_at[keep], own_topic[keep], own_stem[keep]
    uses = np.unique((own_stem * len(sizes) + own_topic) * n_docs + doc_of[own_at]) // n_docs
    used, in_titles = np.unique(uses, return_counts=True)  # (stem, topic): titles holding it
    stems, topics_using = np.unique(used // len(sizes), return_counts=True)
    telling = used[np.isin(used // len(sizes), stems[topics_using == 1]) & (in_titles >= 2)]
    with_own = np.unique(doc_of[own_at[np.isin(own_stem * len(sizes) + own_topic, telling)]])
    own_count = np.bincount(assignment[with_own], minlength=len(sizes))
    names_only = [c for c in big if own_count[c] <= (1 - SAME_STORY_SHARE) * sizes[c]]
    chosen = np.isin(story_topic, names_only)
    story = np.stack([story_topic[chosen], story_key[chosen]])
    if not story.shape[1]:
        return assignment, big
    parent = {c: c for c in big}

    def root(c: int) -> int:
        while parent[c] != c:
            c = parent[c]
        return c

    holders: dict[int, int] = {}  # story key -> the first topic told by it
    for c, k in sorted(zip(story[0].tolist(), story[1].tolist(), strict=True)):
        if k not in holders:
            holders[k] = c
            continue
        a, b = root(holders[k]), root(c)
        if a != b:
            larger, smaller = (a, b) if (sizes[a], -a) >= (sizes[b], -b) else (b, a)
            parent[smaller] = larger
    merged = assignment.copy()
    for c in big:
        top = root(c)
        if top != c:
            merged[assignment == c] = top
    return merged, [c for c in big if root(c) == c]


def _topic_clusters(stream: _Stream, ids: list[Hashable], kn: _Knobs) -> list[Topic]:
    n = len(ids)
    matrix = _features(
        stream,
        n,
        min_df=kn.min_df,
        max_df=kn.max_df,
        word_pairs=kn.word_pairs,
        background=kn.background,
    )
    k = min(kn.max_topics, n // kn.min_size)
    if k < 2 or matrix.shape[1] < 2:
        return [_other(ids)]
    if kn.method == "linkage":
        # A short list (fewer than five results per possible topic, as for the eigengap) is
        # not split further than its fixed-height groups unless it has only one.
        want = k if n >= 5 * kn.max_topics else 2
        # A large topic's split clusters its best-ranked results and places the rest by the
        # nearest centroid below (Buckshot: Cutting et al., Scatter/Gather, 1992): average
        # linkage is quadratic, and a topic of 900 results took a third of a 1,000-hit list.
        head = n if kn.link_max is None else min(n, kn.link_max)
        assignment = linkage_clusters(
            matrix[:head], kn.link_threshold, topics=want, min_size=kn.min_size
        )
        k = int(assignment.max()) + 1
        assignment = np.concatenate([assignment, np.full(n - head, k, dtype=np.int64)])
    else:
        assignment = _spectral(matrix, k, kn)
    # A document with no shared feature cannot be placed by similarity: it belongs nowhere.
    assignment = np.where(np.diff(matrix.indptr) == 0, -1, assignment)
    sizes = np.bincount(assignment + 1, minlength=k + 1)[1:]
    big = [c for c in range(k) if sizes[c] >= kn.min_size]
    if len(big) > kn.max_topics:
        # The largest groups are the topics (ties: the one ranked first), in cluster order.
        first = np.full(k + 1, n)  # (k: the results not clustered, when there are)
        np.minimum.at(first, assignment[assignment >= 0], np.flatnonzero(assignment >= 0))
        big = sorted(sorted(big, key=lambda c: (-sizes[c], first[c]))[: kn.max_topics])
    if kn.method == "linkage":
        assignment = attach_to_nearest(matrix, assignment, big, kn.attach_min)
        assignment[assignment == k] = -1  # not clustered and near no topic: "Other topics"
        sizes = np.bincount(assignment + 1, minlength=k + 1)[1:]
    assignment, big = _same_story(stream, assignment, big, kn)
    phrases = _phrases(stream, n, max_words=kn.max_phrase_words, min_df=kn.min_label_df)
    labels = _labels(stream, phrases, assignment, big, kn)
    topics: list[tuple[int, Topic]] = []
    rest: list[int] = []
    for c in range(-1, k):
        positions = np.flatnonzero(assignment == c).tolist()
        label = labels.get(c)
        if not positions:
            continue
        if label is None:
            rest.extend(positions)
            continue
        members = tuple(ids[i] for i in positions)
        topics.append((positions[0], Topic(label=label, member_ids=members, size=len(members))))
    result = [t for _, t in sorted(topics, key=lambda pt: (-pt[1].size, pt[0]))]
    if not rest and len(result) == 1:
        # One topic holding every result divides nothing (every result tells one story: the
        # demo's "Storm brings flooding to <town>"), and its label can only be a detail, since
        # what all the results share is refused (max_label_share): no topic.
        return [_other(ids)]
    if rest:
        result.append(_other([ids[i] for i in sorted(rest)]))
    return result
