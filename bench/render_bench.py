"""CPU to write a page of results three ways, and the search form and the API's answer two ways.

    .venv/bin/python bench/render_bench.py --dir /tmp/page-bytes [--old c5e07b8] [--rounds 30]
        [--jinja2-widgets]

Uses the database ``bench/page_bytes.py record --dir`` builds. Each query's page of
``--per-page`` groups (MinHash) is searched once; then, in rounds that alternate the ways so a
loaded machine weighs on each alike, every page is written by:

* the list of groups: Jinja2 (``result_groups``, this tree), Django's templates
  (``partials/group.html`` per group, as they were at ``--old``) and the hand-written Python
  writer (``searchapp/templatetags/result_html.py`` at ``--old``);
* the search form's fields: the widgets of this tree, and Django's own widgets rendered by its
  template renderer (with ``--jinja2-widgets``, by its Jinja2 renderer too, whose escaping
  writes other bytes);
* ``/api/search``'s body: this tree's ``search_out`` dumped and encoded as ninja does, against
  the hand-built dict of ``--old`` (``serializers.search_page_data``) encoded the same way, and
  that dict validated by this tree's ``SearchOut`` first.

``--old`` is a commit that still has the old ways (the default, c5e07b8, does). Prints the
median CPU time (``time.process_time``) per page for each, and whether the ways' bytes agree.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["council", "harbour", "energy prices", "water", "university research",
           "bank", "steel", "housing", "rail strike", "Brightfield Energy"]


def _old_file(ref: str, path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{ref}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def _old_module(ref: str, path: str, name: str) -> Any | None:
    try:
        source = _old_file(ref, path)
    except subprocess.CalledProcessError:
        return None
    folder = Path(tempfile.mkdtemp(prefix="render-bench-"))
    (folder / f"{name}.py").write_text(source)
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _timed(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return 1000 * (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dir", type=Path, required=True)
    # The last commit with the hand-written writer, the group templates and the API dict.
    parser.add_argument("--old", default="c5e07b8", help="a git commit with the old ways")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--per-page", type=int, default=20)
    parser.add_argument("--jinja2-widgets", action="store_true",
                        help="also Django's widgets through its Jinja2 form renderer")
    args = parser.parse_args()
    jinja2_widgets = args.jinja2_widgets
    var = args.dir / "var"
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings", DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(32), ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{var / 'db.sqlite3'}", VAR_DIR=str(var),
        SEARCH_INDEX_DIR=str(var / "search-index"), LOG_LEVEL="ERROR",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django import forms
    from django.http import QueryDict
    from django.template import Context, Engine
    from django.test import RequestFactory
    from ninja.responses import NinjaJSONEncoder

    from searchapp.selectors.search import search_grouped
    from searchapp.templatetags import result_html
    from searchapp.web import serializers
    from searchapp.web.forms import SearchForm

    old_python = _old_module(args.old, "searchapp/templatetags/result_html.py", "old_result_html")
    old_serializers = _old_module(args.old, "searchapp/web/serializers.py", "old_serializers")
    old_templates = {
        f"partials/{n}.html": _old_file(args.old, f"templates/partials/{n}.html")
        for n in ("group", "hit", "hit_source")
    }
    engine = Engine(
        loaders=[("django.template.loaders.locmem.Loader", old_templates)],
        libraries={
            "humanize": "django.contrib.humanize.templatetags.humanize",
            "search_ui": "searchapp.templatetags.search_ui",
        },
    )
    django_groups = engine.from_string(
        '{% for group in groups %}{% include "partials/group.html" with method=method '
        "prefix=prefix %}{% endfor %}"
    )

    pages = []
    for q in QUERIES:
        page = search_grouped(query=q, group="minhash", per_page=args.per_page)
        request = RequestFactory().get("/", {"q": q})
        pages.append((page, {"request": request}, QueryDict(f"q={q}&lang=de&sort=date")))

    def jinja2_groups() -> list[str]:
        return [result_html.result_groups(c, p.groups, p.group) for p, c, _ in pages]

    def django_templates() -> list[str]:
        return [
            django_groups.render(
                Context({**c, "groups": p.groups, "method": p.group, "prefix": ""})
            )
            for p, c, _ in pages
        ]

    def python_writer() -> list[str]:
        assert old_python is not None
        return [old_python.result_groups(c, p.groups, p.group) for p, c, _ in pages]

    def form_fields(stock: bool, renderer: Any = None) -> Callable[[], list[str]]:
        def run() -> list[str]:
            out = []
            for _p, _c, query in pages:
                form = SearchForm(query, renderer=renderer)
                form.is_valid()
                for bound in form:
                    widget = bound.field.widget
                    if not stock:
                        out.append(str(bound))
                        continue
                    django_class = next(
                        c for c in type(widget).__mro__
                        if c.__module__ == "django.forms.widgets"
                    )
                    theirs = django_class(attrs=widget.attrs)
                    if isinstance(widget, forms.Select):
                        theirs.choices = widget.choices
                    if isinstance(widget, forms.widgets.Input):
                        theirs.input_type = widget.input_type
                    out.append(bound.as_widget(widget=theirs))
            return out

        return run

    import json

    def api_schema() -> list[str]:
        return [
            json.dumps(serializers.search_out(p).model_dump(), cls=NinjaJSONEncoder)
            for p, _c, _q in pages
        ]

    def api_dict() -> list[str]:
        assert old_serializers is not None
        return [
            json.dumps(old_serializers.search_page_data(p), cls=NinjaJSONEncoder)
            for p, _c, _q in pages
        ]

    def api_dict_validated() -> list[str]:
        assert old_serializers is not None
        schema = serializers.SearchOut
        return [
            json.dumps(
                schema.model_validate(old_serializers.search_page_data(p)).model_dump(),
                cls=NinjaJSONEncoder,
            )
            for p, _c, _q in pages
        ]

    ways: dict[str, Callable[[], list[str]]] = {"groups: Jinja2 templates": jinja2_groups,
                                                "groups: Django templates (old)": django_templates}
    if old_python is not None:
        ways["groups: Python writer (old)"] = python_writer
    ways["form: this tree's widgets"] = form_fields(stock=False)
    ways["form: Django's widgets (template renderer)"] = form_fields(stock=True)
    if jinja2_widgets:
        from django.forms.renderers import Jinja2

        # Jinja2's escape writes &#34; where Django's writes &quot;: not the same bytes.
        ways["form: Django's widgets (Jinja2 renderer)"] = form_fields(True, Jinja2())
    if hasattr(serializers, "search_out"):
        ways["api: SearchOut dumped"] = api_schema
    if old_serializers is not None and hasattr(old_serializers, "search_page_data"):
        ways["api: hand-built dict (old)"] = api_dict
        ways["api: that dict validated by SearchOut"] = api_dict_validated

    outputs = {name: way() for name, way in ways.items()}  # warm: templates compiled, caches
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, way in ways.items():
            times[name].append(_timed(way) / len(pages))
    groups = sum(len(p.groups) for p, _c, _q in pages) / len(pages)
    results = sum(p.n_results for p, _c, _q in pages) / len(pages)
    print(f"# {len(pages)} pages of {groups:.1f} groups ({results:.1f} results) on average; "
          f"median CPU ms per page over {args.rounds} alternating rounds; "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, spent in times.items():
        quartiles = statistics.quantiles(spent, n=4)
        print(f"  {name:45s} {statistics.median(spent):7.2f} ms"
              f"  (quartiles {quartiles[0]:.2f}-{quartiles[2]:.2f})")
    for kind in ("groups", "form", "api"):
        named = [n for n in outputs if n.startswith(kind)]
        same = all(outputs[n] == outputs[named[0]] for n in named)
        print(f"  {kind}: {' = '.join(named)}: {'the same bytes' if same else 'DIFFERENT bytes'}")


if __name__ == "__main__":
    main()
