from __future__ import annotations

import numpy as np
import pytest

from dedup import find_near_duplicates

BASE = (
    "The central bank raised its benchmark interest rate by a quarter point on Tuesday, "
    "citing persistent inflation in services and a tight labour market across the region."
)


def test_it_reports_a_lightly_edited_copy_and_nothing_else():
    texts = [
        BASE,
        "Unrelated story about cocoa harvests in Bahia this week.",
        BASE + " Reuters",
        "",
    ]
    result = find_near_duplicates(texts, threshold=0.8)
    assert result.pairs.tolist() == [[0, 2]]
    assert result.similarities[0] == pytest.approx(23 / 24)  # 27 tokens: 23 shingles, copy adds one


def test_estimate_mode_reports_similarities_from_signatures():
    result = find_near_duplicates([BASE, BASE.upper(), "other"], verify="estimate")
    assert result.pairs.tolist() == [[0, 1]] and result.similarities.tolist() == [1.0]


def test_progress_is_reported_up_to_the_total():
    calls = []
    find_near_duplicates([BASE] * 10, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (10, 10) and all(t == 10 for _, t in calls)


def test_empty_and_tiny_inputs_do_not_crash():
    assert len(find_near_duplicates([])) == 0
    assert len(find_near_duplicates(["", "", " "])) == 0  # empty texts match nothing
    assert find_near_duplicates(["a b", "A  B"]).pairs.tolist() == [[0, 1]]


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"method": "lsh"}, "method"),
        ({"verify": "maybe"}, "verify"),
        ({"threshold": 0}, "threshold"),
    ],
)
def test_bad_arguments_are_named(kwargs, word):
    with pytest.raises(ValueError, match=word):
        find_near_duplicates(["a"], **kwargs)


def test_simhash_method_finds_the_same_copy():
    texts = [BASE, BASE + " Reuters", "Unrelated story about cocoa harvests in Bahia this week."]
    result = find_near_duplicates(texts, method="simhash", max_distance=6)
    assert [0, 1] in result.pairs.tolist()
    assert np.all(result.similarities >= 0.8)


def test_five_thousand_identical_documents_fold_without_quadratic_pairs():
    from dedup import clusters

    texts = [BASE] * 5000 + ["Unrelated story about cocoa harvests in Bahia this week."]
    result = find_near_duplicates(texts)
    assert result.pairs.shape[0] < 5000 * 20  # all pairs would be 12,497,500
    assert np.all(result.similarities == 1.0)
    groups = clusters(len(texts), result.pairs)
    assert len(groups) == 1 and groups[0].tolist() == list(range(5000))
