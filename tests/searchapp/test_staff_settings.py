"""The dedup settings page: bands x rows, the S-curve, FP/FN rates, confirmation, rebuild."""

# Fixtures are imported from staff_testing and then named as test arguments, as pytest wants.
# The page prints bands and rows with a multiplication sign.
# ruff: noqa: F811, RUF001
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from corpora import make_news, sign_all
from django.urls import reverse
from staff_testing import fast_password_hashing, staff_client, staff_user  # noqa: F401 - fixtures

from dedup import LSHParams, optimal_params
from searchapp.models import DedupSettings, Job, SignatureSet
from searchapp.topics.svg import s_curve_svg

pytestmark = pytest.mark.django_db

SVG_NS = "{http://www.w3.org/2000/svg}"


def form_data(**overrides: object) -> dict[str, object]:
    data = {
        "method": "minhash",
        "shingle_kind": "word",
        "shingle_size": 5,
        "num_perm": 128,
        "threshold": 0.8,
        "simhash_max_distance": 3,
    }
    data.update(overrides)
    return data


def test_the_page_shows_the_bands_and_rows_the_engine_chooses_for_the_current_threshold(
    staff_client,
):
    params = optimal_params(0.8, 128)
    html = staff_client.get(reverse("staff:settings")).content.decode()
    assert f"{params.bands} bands × {params.rows} rows" in html
    assert f"{params.false_positive_rate(0.8):.4f}" in html
    assert f"{params.false_negative_rate(0.8):.4f}" in html
    assert "<svg" in html and "<title" in html and "<desc" in html


@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.9])
def test_the_preview_follows_the_threshold_before_anything_is_saved(staff_client, threshold):
    response = staff_client.post(
        reverse("staff:settings_preview"), form_data(threshold=threshold), HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    params = optimal_params(threshold, 128)
    assert response.status_code == 200
    assert f'data-bands="{params.bands}" data-rows="{params.rows}"' in html
    assert f"threshold {threshold:.2f}" in html
    assert DedupSettings.load().threshold == 0.8
    assert not Job.objects.exists()


def test_a_lower_threshold_gives_more_bands_of_fewer_rows(staff_client):
    def bands_rows(t: float) -> tuple[int, int]:
        html = staff_client.post(
            reverse("staff:settings_preview"), form_data(threshold=t)
        ).content.decode()
        m = re.search(r'data-bands="(\d+)" data-rows="(\d+)"', html)
        assert m, html
        return int(m.group(1)), int(m.group(2))

    (b_low, r_low), (b_high, r_high) = bands_rows(0.5), bands_rows(0.9)
    assert b_low > b_high and r_low < r_high


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("threshold", "abc", "Enter a number"),
        ("threshold", "1.5", "less than or equal to 1.0"),
        ("num_perm", "0", "greater than or equal to 16"),
        ("shingle_kind", "sentence", "Select a valid choice"),
    ],
)
def test_bad_values_get_a_clear_message_and_never_a_500(staff_client, field, value, message):
    preview = staff_client.post(reverse("staff:settings_preview"), form_data(**{field: value}))
    assert preview.status_code == 200
    assert "Correct the fields" in preview.content.decode()
    response = staff_client.post(
        reverse("staff:settings"), form_data(**{field: value}, confirm="yes")
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert DedupSettings.load().threshold == 0.8
    assert not Job.objects.exists()


def test_saving_asks_for_confirmation_first(staff_client):
    response = staff_client.post(
        reverse("staff:settings"), form_data(threshold=0.6, shingle_size=3)
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Confirm the new dedup settings" in html
    assert 'name="confirm" value="yes"' in html
    assert "word:3" in html
    # Nothing changed yet.
    assert DedupSettings.load().threshold == 0.8
    assert not Job.objects.exists()


def test_confirming_saves_the_settings_and_starts_a_rebuild_shown_on_the_page(
    staff_client, staff_user, django_capture_on_commit_callbacks
):
    make_news()
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("staff:settings"),
            form_data(threshold=0.6, shingle_size=3, num_perm=64, confirm="yes"),
        )
    assert response.status_code == 302
    saved = DedupSettings.load()
    assert (saved.threshold, saved.shingle, saved.num_perm, saved.updated_by) == (
        0.6,
        "word:3",
        64,
        staff_user,
    )
    job = Job.objects.get(kind=Job.Kind.REBUILD)
    assert response["Location"].endswith(f"?job={job.pk}")
    page = staff_client.get(response["Location"]).content.decode()
    assert f'id="job-progress-{job.pk}"' in page
    # Tasks run inline in tests: the new version is built and active with the chosen parameters.
    job.refresh_from_db()
    assert job.state == Job.State.DONE, job.message
    active = SignatureSet.objects.get(method="minhash", state="active")
    params = optimal_params(0.6, 64)
    assert (active.params["threshold"], active.params["bands"], active.params["rows"]) == (
        0.6,
        params.bands,
        params.rows,
    )
    assert active.params["shingle"] == "word:3"


# --- the SVG itself ------------------------------------------------------------------------


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_the_s_curve_svg_is_well_formed_accessible_and_marks_threshold_and_knee():
    params = LSHParams(bands=20, rows=5)
    root = parse(str(s_curve_svg(bands=20, rows=5, threshold=0.8)))
    assert root.get("role") == "img"
    title = root.find(f"{SVG_NS}title")
    desc = root.find(f"{SVG_NS}desc")
    assert title is not None and "20 bands × 5 rows" in title.text
    assert (
        desc is not None
        and "Threshold 0.80" in desc.text
        and f"Knee at similarity {params.knee:.2f}" in desc.text
    )
    labels = [t.text for t in root.iter(f"{SVG_NS}text")]
    assert "Jaccard similarity s" in labels and "P(candidate)" in labels
    assert "threshold 0.80" in labels and f"knee {params.knee:.2f}" in labels
    # The curve passes through the plotted probabilities: P rises from 0 at s=0 to 1 at s=1.
    points = [
        tuple(map(float, p.split(",")))
        for p in root.find(f"{SVG_NS}polyline").get("points").split()
    ]
    assert len(points) == 101
    ys = [y for _, y in points]
    assert ys == sorted(ys, reverse=True)  # SVG y grows downwards: a rising curve
    threshold_line = root.find(f"{SVG_NS}line[@class='threshold']")
    knee = root.find(f"{SVG_NS}circle[@class='knee']")
    x0 = float(root.find(f"{SVG_NS}line[@class='axis x-axis']").get("x1"))
    x1 = float(root.find(f"{SVG_NS}line[@class='axis x-axis']").get("x2"))
    assert float(threshold_line.get("x1")) == pytest.approx(x0 + 0.8 * (x1 - x0), abs=0.1)
    assert float(knee.get("cx")) == pytest.approx(x0 + params.knee * (x1 - x0), abs=0.1)


def test_the_knee_moves_right_as_rows_grow():
    def knee_x(bands: int, rows: int) -> float:
        root = parse(str(s_curve_svg(bands=bands, rows=rows, threshold=0.5)))
        return float(root.find(f"{SVG_NS}circle[@class='knee']").get("cx"))

    assert knee_x(32, 4) < knee_x(16, 8) < knee_x(8, 16)


# --- one state, polled together ---------------------------------------------------------------


def test_the_settings_state_says_one_thing_while_a_rebuild_runs_and_another_once_it_is_done(
    staff_client, django_capture_on_commit_callbacks
):
    make_news()
    old = sign_all("minhash")
    with django_capture_on_commit_callbacks() as callbacks:  # the rebuild waits for its worker
        staff_client.post(
            reverse("staff:settings"),
            form_data(threshold=0.6, simhash_max_distance=5, confirm="yes"),
        )
    job = Job.objects.get(kind=Job.Kind.REBUILD)
    page = staff_client.get(reverse("staff:settings") + f"?job={job.pk}").content.decode()
    polled = re.search(r'id="settings-state"[^>]* hx-get="([^"]+)"', page)
    assert polled, "the state block does not poll while the rebuild runs"
    polled = polled.group(1).replace("&amp;", "&")

    running = staff_client.get(polled).content.decode()
    assert (
        "In force for search: MinHash + LSH, shingles word:5, 128 permutations, threshold 0.80"
        in running
    )
    assert (
        f"Saved, in force when rebuild job {job.pk} completes: threshold 0.6, SimHash distance 5."
        in running
    )
    assert f"MinHash signature version {old.pk}" in running
    assert 'hx-trigger="every 1s"' in running  # the whole block polls, not the job alone
    assert 'id="job-progress' in running and 'hx-get="/jobs/' not in running
    # Job numbers and versions are named apart: never "#5" beside "v4".
    assert f"#{job.pk}" not in visible_text(running) and f"v{old.pk}" not in visible_text(running)

    with django_capture_on_commit_callbacks(execute=True):
        for callback in callbacks:
            callback()
    job.refresh_from_db()
    assert job.state == Job.State.DONE, job.message
    new = SignatureSet.objects.get(method="minhash", state="active")
    done = staff_client.get(polled).content.decode()
    state = done.split('<div id="settings-state"', 1)[1].split('id="settings-fields"', 1)[0]
    assert "threshold 0.60" in state and "threshold 0.80" not in state
    assert "Saved, in force when" not in state
    assert f"{new.label} is now in force" in state
    assert f"MinHash signature version {new.pk}, in force since" in state
    assert 'hx-trigger="every 1s"' not in state  # nothing under way: the polling stops
    # The form starts from the settings in force, which just changed: refreshed out of band.
    fields = done.split('id="settings-fields"', 1)[1]
    assert 'hx-swap-oob="true"' in fields and 'name="threshold" value="0.6"' in fields
    # A full load of the page says the same.
    page = staff_client.get(reverse("staff:settings") + f"?job={job.pk}").content.decode()
    assert "threshold 0.60" in page and "Saved, in force when" not in page
    assert f"{new.label} is now in force" in page


def visible_text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)
