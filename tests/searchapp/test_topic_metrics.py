"""The topic-clustering measures of bench/topic_metrics.py on clusterings worked out by hand.

The benchmark's quality table (bench/topics/README.md) is only as right as these functions, so
each measure is checked on a six-result example whose pair counts were counted by hand, on the
two trivial baselines, and (Rand / Adjusted Rand) against scikit-learn on random clusterings.
"""

from __future__ import annotations

import importlib
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest
from sklearn.metrics import adjusted_rand_score, rand_score

# bench/ is a folder of scripts, not a package: import the module the way the scripts do.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
tm: ModuleType = importlib.import_module("topic_metrics")

# a, b, c are about X; d, e about Y; f about Z.
GOLD = {"a": ["X"], "b": ["X"], "c": ["X"], "d": ["Y"], "e": ["Y"], "f": ["Z"]}
# The system splits X and mixes the rest: {a b} {c d} {e f}.
SYSTEM = [["a", "b"], ["c", "d"], ["e", "f"]]
SINGLETONS = [[d] for d in GOLD]
ALL_IN_ONE = [list(GOLD)]


def test_pair_counts_of_the_worked_example() -> None:
    # 15 pairs; together in the system: ab cd ef; together in gold: ab ac bc de.
    assert tm.pair_counts(SYSTEM, GOLD) == tm.PairCounts(tp=1, fp=2, fn=3, tn=9)


def test_rand_jaccard_and_adjusted_rand_of_the_worked_example() -> None:
    assert tm.rand_index(SYSTEM, GOLD) == pytest.approx(10 / 15)
    assert tm.jaccard_index(SYSTEM, GOLD) == pytest.approx(1 / 6)
    # Expected TP under chance = 3 * 4 / 15 = 0.8; maximum = (3 + 4) / 2 = 3.5.
    assert tm.adjusted_rand_index(SYSTEM, GOLD) == pytest.approx((1 - 0.8) / (3.5 - 0.8))


def test_f1_of_the_worked_example() -> None:
    # X: best cluster {a b}, P 1, R 2/3 -> 0.8; Y: 0.5; Z: {e f}, P 1/2, R 1 -> 2/3.
    expected = 3 / 6 * 0.8 + 2 / 6 * 0.5 + 1 / 6 * 2 / 3
    assert tm.clustering_f1(SYSTEM, GOLD) == pytest.approx(expected)


def test_the_trivial_baselines_get_no_adjusted_rand_credit() -> None:
    assert tm.adjusted_rand_index(SINGLETONS, GOLD) == 0.0
    assert tm.adjusted_rand_index(ALL_IN_ONE, GOLD) == 0.0
    assert tm.jaccard_index(SINGLETONS, GOLD) == 0.0
    assert tm.jaccard_index(ALL_IN_ONE, GOLD) == pytest.approx(4 / 15)
    assert tm.rand_index(SINGLETONS, GOLD) == pytest.approx(11 / 15)
    assert tm.rand_index(ALL_IN_ONE, GOLD) == pytest.approx(4 / 15)
    assert tm.clustering_f1(SINGLETONS, GOLD) == pytest.approx(0.25 + 2 / 6 * 2 / 3 + 1 / 6)
    all_in_one = 0.5 * 2 / 3 + 2 / 6 * 0.5 + 1 / 6 * 2 / 7
    assert tm.clustering_f1(ALL_IN_ONE, GOLD) == pytest.approx(all_in_one)


def test_the_gold_clustering_scores_perfectly() -> None:
    perfect = [["a", "b", "c"], ["d", "e"], ["f"]]
    assert tm.adjusted_rand_index(perfect, GOLD) == 1.0
    assert tm.rand_index(perfect, GOLD) == 1.0
    assert tm.jaccard_index(perfect, GOLD) == 1.0
    assert tm.clustering_f1(perfect, GOLD) == pytest.approx(1.0)


def test_results_without_gold_are_ignored_and_missing_ones_are_singletons() -> None:
    # "z" has no subtopic: it changes nothing. "f" left out of the clustering is on its own.
    assert tm.pair_counts([["a", "b", "z"], ["c", "d"], ["e"]], GOLD) == tm.pair_counts(
        [["a", "b"], ["c", "d"], ["e"], ["f"]], GOLD
    )


def test_a_result_with_two_subtopics_counts_under_its_first_for_partitions() -> None:
    gold = {"a": ["X"], "b": ["Y", "X"], "c": ["Y"]}
    assert tm.pair_counts([["a"], ["b", "c"]], gold) == tm.PairCounts(tp=1, fp=0, fn=0, tn=2)


def test_a_result_in_two_clusters_is_refused() -> None:
    with pytest.raises(ValueError, match="two clusters"):
        tm.pair_counts([["a", "b"], ["b"]], GOLD)


@pytest.mark.parametrize("seed", range(20))
def test_rand_and_adjusted_rand_agree_with_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(rng.randint(2, 40))]
    gold = {d: [rng.randint(0, rng.randint(0, 6))] for d in docs}
    system_of = {d: rng.randint(0, rng.randint(0, 8)) for d in docs}
    clustering = [[d for d in docs if system_of[d] == c] for c in sorted(set(system_of.values()))]
    truth = [gold[d][0] for d in docs]
    labels = [system_of[d] for d in docs]
    assert tm.rand_index(clustering, gold) == pytest.approx(rand_score(truth, labels))
    assert tm.adjusted_rand_index(clustering, gold) == pytest.approx(
        adjusted_rand_score(truth, labels)
    )


def test_round_robin_takes_the_head_of_every_cluster_first() -> None:
    assert tm.flatten_round_robin([["a", "b", "c"], ["d"], ["e", "f"]]) == [
        "a",
        "d",
        "e",
        "b",
        "f",
        "c",
    ]


def test_s_recall_counts_subtopics_covered_by_the_first_k() -> None:
    ranking = tm.flatten_round_robin(SYSTEM)  # a c e b d f
    assert ranking == ["a", "c", "e", "b", "d", "f"]
    assert [tm.s_recall_at_k(ranking, GOLD, k) for k in (1, 2, 3, 5, 6)] == pytest.approx(
        [1 / 3, 1 / 3, 2 / 3, 2 / 3, 1.0]
    )
    # Every listed subtopic of a result counts as covered.
    assert tm.s_recall_at_k(["b"], {"a": ["X"], "b": ["Y", "X"]}, 1) == 1.0
    assert tm.mean_s_recall(ranking, GOLD, ks=[1, 6]) == pytest.approx((1 / 3 + 1) / 2)


def test_label_hits_need_a_shared_word_other_than_the_query() -> None:
    assert tm.label_hit("Big cats", "Jaguar (big cat)", ignore=["jaguar"])
    assert not tm.label_hit("Jaguar Cars", "Jaguar (band)", ignore=["jaguar"])
    # The query word alone is not a hit: every label could contain it.
    assert not tm.label_hit("Jaguar", "Jaguar (animal)", ignore=["jaguar"])
    assert tm.label_hit("Used car dealers", "Cars", ignore=[])
    # Case and accents are folded (Turkish dotted capital I), inflections matched by prefix.
    assert tm.label_hit("İNTERNET servisleri", "internet", ignore=[])
    # Turkish "tasarimi" (its design) / "TASARIM" (design), written with dotless i.
    assert tm.label_hit("Web tasar\u0131m\u0131", "TASARIM ve Geli\u015ftirme", ignore=[])
    assert not tm.label_hit("Art", "Artillery", ignore=[])
    # Stop words are nobody's topic.
    assert not tm.label_hit("Watch or listen", "Aida, a film or an opera", ignore=["aida"])


def test_best_cluster_is_the_one_sharing_most_results() -> None:
    assert tm.best_cluster(["c", "d", "e"], SYSTEM) == 1  # ties between 1 and 2: the earlier
    assert tm.best_cluster(["f"], SYSTEM) == 2
    assert tm.best_cluster(["q"], SYSTEM) is None


def test_the_benchmark_reads_the_task_layout(tmp_path: Path) -> None:
    # bench/topics_semeval.py's loader on a two-query collection in SemEval/AMBIENT's layout:
    # ranks ordered numerically (2 before 10), HTML of snippets removed, unannotated results
    # kept as results but not in the gold, ODP-style "A > B > C" subtopic titles cut to C.
    ts = importlib.import_module("topics_semeval")
    (tmp_path / "topics.txt").write_text("ID\tdescription\n1\tjaguar\n2\tapple\n")
    (tmp_path / "subTopics.txt").write_text(
        "ID\tdescription\n1.1\tJaguar Cars\n1.2\tAnimals > Cats > Big cats\n2.1\tApple Inc.\n"
    )
    (tmp_path / "results.txt").write_text(
        "ID\turl\ttitle\tsnippet\n"
        "1.10\thttp://a\tCat\tThe <b>jaguar</b> &amp; its prey\n"
        "1.2\thttp://b\tCar\tA <b>Jaguar</b> XJ\n"
        "1.3\thttp://c\tSpam\tunjudged\n"
        "2.1\thttp://d\tiPhone\tApple's phone\n"
    )
    (tmp_path / "STRel.txt").write_text("subTopicID\tresultID\n1.1\t1.2\n1.2\t1.10\n2.1\t2.1\n")
    jaguar, apple = ts.load_collection(str(tmp_path))
    assert jaguar.text == "jaguar"
    assert [r[0] for r in jaguar.results] == ["1.2", "1.3", "1.10"]
    assert jaguar.results[2][2] == "The jaguar & its prey"
    assert jaguar.gold == {"1.2": ["1.1"], "1.10": ["1.2"]}
    assert jaguar.subtopic_titles == {"1.1": "Jaguar Cars", "1.2": "Big cats"}
    assert apple.gold == {"2.1": ["2.1"]}


def test_the_benchmark_reads_a_wikipedia_title_query_as_the_words_a_searcher_types(
    tmp_path: Path,
) -> None:
    # SemEval-2013 writes "ten_commandments": read as one word, neither the clustering nor the
    # label measure would know "ten" and "commandments" for the query's words, and a label
    # holding them would count as naming every subtopic whose description repeats the name.
    ts = importlib.import_module("topics_semeval")
    (tmp_path / "topics.txt").write_text("id\tdescription\n1\tten_commandments\n")
    (tmp_path / "subTopics.txt").write_text("id\tdescription\n1.1\tThe Ten Commandments (film)\n")
    (tmp_path / "results.txt").write_text(
        "ID\turl\ttitle\tsnippet\n1.1\thttp://a\tMoses\tTablets\n"
    )
    (tmp_path / "STRel.txt").write_text("subTopicID\tresultID\n1.1\t1.1\n")
    (query,) = ts.load_collection(str(tmp_path))
    assert query.text == "ten commandments"


def test_task_f1_scores_singletons_100_and_all_in_one_from_majority_precision_and_recall() -> None:
    # Singletons: every cluster pure (P = 1), every subtopic wholly in clusters it leads (R = 1).
    assert tm.task_f1(SINGLETONS, GOLD) == 1.0
    # All in one: P = 3/6 (X leads), R = mean(1, 0, 0) = 1/3; F1 = 2PR / (P + R) = 0.4.
    assert tm.task_f1(ALL_IN_ONE, GOLD) == pytest.approx(0.4)
    # {a b} {c d} {e f}: P = mean(1, 1/2, 1/2) = 2/3 (ties go to the first subtopic by name:
    # X leads {c d}, Y leads {e f}); R = mean(X 3/3, Y 1/2, Z 0) = 1/2; F1 = 4/7.
    assert tm.task_f1(SYSTEM, GOLD) == pytest.approx(4 / 7)


def test_s_precision_is_the_optimal_rank_over_the_systems_rank_for_a_recall() -> None:
    # Three subtopics: the optimum covers all of them in 3 results (a, d, f).
    assert tm.s_precision_at_r(["a", "d", "f", "b"], GOLD, 1.0) == 1.0
    # a b c d e f covers Z only at rank 6: 3 / 6.
    assert tm.s_precision_at_r(["a", "b", "c", "d", "e", "f"], GOLD, 1.0) == pytest.approx(0.5)
    # Two thirds of the subtopics (2 of 3): the optimum needs 2, "a b c d" reaches them at 4.
    assert tm.s_precision_at_r(["a", "b", "c", "d"], GOLD, 0.6) == pytest.approx(0.5)
    # Never reached: 0.
    assert tm.s_precision_at_r(["a", "b"], GOLD, 1.0) == 0.0


@pytest.mark.parametrize(
    ("label", "defect"),
    [
        ("Wednesday that quarterly profit", "date at start"),
        ("Larkhill University said construction", "reporting verb"),
        ("1987 results", "number at start"),
        ("oil prices rising", "verb form at end"),
        ("Reuters staff", "by-line at start"),
        ("prices of the", "stop word at end"),
        ("shows promise", "verb at start"),
        ("Leila Lindgren wins Granton", "verb after a name"),
        ("Gilts SEEN Rising", "heading in capitals"),
    ],
)
def test_label_defects_name_what_a_reader_would_object_to(label: str, defect: str) -> None:
    assert defect in tm.label_defects(label)


def test_a_label_ending_in_a_first_name_names_nobody() -> None:
    assert "first name alone" in tm.label_defects("Luca", frozenset({"Luca"}))
    assert "first name alone" in tm.label_defects("Substitute striker Nia", frozenset({"Nia"}))
    assert tm.label_defects("Luca Bianchi", frozenset({"Luca"})) == []


def test_plural_nouns_and_acronyms_are_clean_labels() -> None:
    for label in ("oil prices", "Bank loans", "OPEC", "peace talks"):
        assert tm.label_defects(label) == [], label


def test_names_with_function_words_are_clean_labels() -> None:
    for label in ("Bank of America", "Lord of the Rings", "Reading Festival", "MP3 player"):
        assert tm.label_defects(label) == []
