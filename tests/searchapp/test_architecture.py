"""The house's rules, read from the code's imports (docs/architecture.md draws the same map).

Each rule is one a newcomer relies on: arrows point down the layers, no door borrows from another
door, no import circle (function-local imports included: a circle hidden inside a function is
still a circle), a function-local import says why it is local, and no module of the app grows
past what one reader can hold. The engine's purity (tests/dedup/test_purity.py) and the
readers' (test_readers_boundary.py) have tests of their own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Highest first. A module may import its own layer and any layer below it, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "doors",
        (
            "config.urls",
            "searchapp.web.views",
            "searchapp.web.jobs",
            "searchapp.web.api",
            "searchapp.web.forms",
            "searchapp.templatetags",
            "searchapp.admin",
            "searchapp.staff",
            "searchapp.management",
            "searchapp.tasks",
            "searchapp.web.context_processors",
            "searchapp.web.middleware",
            "config.wsgi",
            "searchapp.apps",
            # Shared by the doors (SHARED_DOOR_PARTS): guards, serializers, forms, the 503s.
            "searchapp.web.access",
            "searchapp.web.serializers",
            "searchapp.web.unavailable",
        ),
    ),
    ("reads", ("searchapp.selectors",)),
    ("writes", ("searchapp.services",)),
    ("index", ("searchapp.search",)),
    (
        "support",
        (
            "searchapp.readers",
            "searchapp.background",
            # The web's package itself, a docstring: its modules are listed one by one, by layer.
            "searchapp.web",
            "searchapp.web.csv_safety",
            "searchapp.web.converters",
            "searchapp.signature_codec",
            # Topics of a result list: the package and its modules (the anchors' table aside).
            "searchapp.topics",
            "searchapp.topics.clustering",
            "searchapp.topics.words",
            "searchapp.topics.labels",
            "searchapp.topics.spectral",
            "searchapp.topics.linkage",
            "searchapp.topics.memory",
            "searchapp.topics.svg",
            # The results' topic map: layout (treemap), label fitting, the SVG.
            "searchapp.topics.treemap",
            "searchapp.topics.label_fit",
            "searchapp.topics.result_map",
            "searchapp.topics.map_input",
            "searchapp.publishing",
            "searchapp.demo",
            "searchapp.languages",
            # One record per language (stemmer, stop words, n-gram size, label rules).
            "searchapp.language_components",
        ),
    ),
    (
        "infra",
        (
            "searchapp.models",
            "config.settings",
            "config.celery",
            "config.folder_broker",
            "searchapp.db_values",
            # The memo: its process tier and key rule, Redis, the topic anchors' table.
            "searchapp.memo",
            # The app's package (a docstring) and the configuration's, which only loads Celery's
            # app (Celery's Django recipe).
            "searchapp",
            "config",
        ),
    ),
    # What settings.py itself reads: typed environment helpers and the parameters' one owner.
    ("foundation", ("config.env", "searchapp.grouping_params")),
    ("engine", ("dedup",)),
]
# Writes may read through selectors (the HackSoft style): the one arrow allowed upward. The
# opposite one, a read importing a write, is refused by its own test below.
ALLOWED_UPWARD = {("writes", "reads")}

# Doors that route to other doors by nature: the URL configurations and the app's ready() hook.
ROUTERS = {"config.urls", "searchapp.staff.urls", "searchapp.apps"}
# Parts that the doors share rather than borrow from each other: every guard (access), the one
# serializer of a search result (the API and the downloads), and the search and compare forms
# (which the page views validate with and the template tags render), and the 503 of a database
# or search servers out of reach (the middleware's, and the API's own handlers').
SHARED_DOOR_PARTS = {
    "searchapp.web.access",
    "searchapp.web.serializers",
    "searchapp.web.forms",
    "searchapp.web.unavailable",
}

# The one module allowed past MAX_LINES, with the reason it gives in its own docstring.
MAX_LINES = 550
SINGLE_ALGORITHM_MODULES = {"searchapp/topics/clustering.py"}


@dataclass
class Module:
    name: str
    path: Path
    imports: set[str] = field(default_factory=set)  # module level
    local_imports: list[tuple[int, str]] = field(default_factory=list)  # (line, target)


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for package in ("config", "searchapp", "dedup"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = Module(name, path)
    return found


def _resolve(name: str, modules: dict[str, Module]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(
    node: ast.Import | ast.ImportFrom, module: Module, modules: dict[str, Module]
) -> list[str]:
    """The app's or the engine's modules an import statement loads (other libraries: none)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: from the module's package, one level up per extra dot
            package = module.name
            if module.path.name != "__init__.py":
                package = package.rpartition(".")[0]
            parts = package.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join([*parts, base] if base else parts)
        names = [f"{base}.{alias.name}" for alias in node.names] + [base]
    resolved = {_resolve(n, modules) for n in names}
    return sorted(t for t in resolved if t and t != module.name)


def _read_imports(module: Module, modules: dict[str, Module]) -> None:
    pending: list[tuple[ast.AST, bool]] = [(ast.parse(module.path.read_text()), True)]
    while pending:
        node, top = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                pending.append((child, False))
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue  # annotations only: never executed
            elif isinstance(child, ast.Import | ast.ImportFrom):
                targets = _targets(child, module, modules)
                if top:
                    module.imports.update(targets)
                else:
                    # A library imported locally counts too (it needs its comment as well).
                    module.local_imports += [(child.lineno, t) for t in targets or [""]]
            else:
                pending.append((child, top))


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    found = _modules()
    for module in found.values():
        _read_imports(module, found)
    return found


def _layer(name: str) -> int:
    # The longest matching prefix wins ("searchapp" names the package, not all of it).
    best: tuple[int, int] | None = None
    for rank, (_label, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and (
                best is None or len(prefix) > best[1]
            ):
                best = (rank, len(prefix))
    if best is not None:
        return best[0]
    raise AssertionError(f"{name} is in no layer: add it to LAYERS and to docs/architecture.md")


def _edges(module: Module) -> set[str]:
    return module.imports | {t for _line, t in module.local_imports if t}


def test_every_module_has_a_layer(modules: dict[str, Module]) -> None:
    for name in modules:
        _layer(name)


def test_arrows_point_down_the_layers(modules: dict[str, Module]) -> None:
    wrong = []
    for module in modules.values():
        for target in _edges(module):
            here, there = _layer(module.name), _layer(target)
            labels = (LAYERS[here][0], LAYERS[there][0])
            if there < here and labels not in ALLOWED_UPWARD:
                wrong.append(f"{module.name} ({labels[0]}) imports {target} ({labels[1]})")
    assert not wrong, "\n".join(sorted(wrong))


def test_reads_never_import_writes(modules: dict[str, Module]) -> None:
    wrong = [
        f"{m.name} imports {t}"
        for m in modules.values()
        if m.name.startswith("searchapp.selectors")
        for t in _edges(m)
        if t.startswith("searchapp.services")
    ]
    assert not wrong, "\n".join(wrong)


def test_no_door_imports_another_door(modules: dict[str, Module]) -> None:
    doors = LAYERS[0][1]

    def door_of(name: str) -> str | None:
        for prefix in doors:
            if name == prefix or name.startswith(prefix + "."):
                # A package of doors (staff/, management/, templatetags/) is one door.
                return prefix
        return None

    wrong = []
    for module in modules.values():
        mine = door_of(module.name)
        if mine is None or module.name in ROUTERS:
            continue
        for target in _edges(module):
            theirs = door_of(target)
            if theirs is not None and theirs != mine and theirs not in SHARED_DOOR_PARTS:
                wrong.append(f"{module.name} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle(modules: dict[str, Module]) -> None:
    graph = {name: _edges(module) for name, module in modules.items()}
    assert _circles(graph) == []


def test_a_function_local_import_says_why(modules: dict[str, Module]) -> None:
    unexplained = []
    for module in modules.values():
        lines = module.path.read_text().splitlines()
        for line_no, _target in module.local_imports:
            # A comment on the import's line, the line above it, or opening its block.
            window = lines[max(0, line_no - 3) : line_no]
            if not any("#" in line for line in window):
                unexplained.append(f"{module.path.relative_to(ROOT)}:{line_no}")
    assert not unexplained, "function-local imports without a comment:\n" + "\n".join(
        sorted(set(unexplained))
    )


def test_no_module_of_the_app_grows_past_one_readers_reach() -> None:
    long = []
    for path in sorted((ROOT / "searchapp").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if "migrations" in path.parts or rel in SINGLE_ALGORITHM_MODULES:
            continue
        count = len(path.read_text().splitlines())
        if count > MAX_LINES:
            long.append(f"{rel}: {count} lines")
    assert not long, "\n".join(long)
    for rel in SINGLE_ALGORITHM_MODULES:
        assert "one algorithm" in (ROOT / rel).read_text()[:3000], rel


# A folder a reader takes in at a glance; a feature that outgrows it gets a folder of its own.
MAX_MODULES_PER_FOLDER = 15
# One folder per feature inside the layers (docs/architecture.md, "Where a new thing goes").
FEATURE_FOLDERS = (
    "searchapp/topics",
    "searchapp/selectors/folding",
    "searchapp/selectors/topics",
    "searchapp/services/clusters",
    "searchapp/services/ingest",
    "searchapp/services/signatures",
    "searchapp/services/partial_copies",
)


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    crowded = []
    for package in ("config", "searchapp", "dedup"):
        for folder in [ROOT / package, *(p for p in (ROOT / package).rglob("*") if p.is_dir())]:
            if "migrations" in folder.parts or "__pycache__" in folder.parts:
                continue
            count = len(list(folder.glob("*.py")))
            if count > MAX_MODULES_PER_FOLDER:
                crowded.append(f"{folder.relative_to(ROOT)}: {count} modules")
    assert not crowded, "\n".join(crowded)


def test_each_feature_has_its_folder_and_the_map_names_it() -> None:
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    for folder in FEATURE_FOLDERS:
        assert (ROOT / folder / "__init__.py").is_file(), f"{folder} is not a package"
        name = folder.rpartition("/")[2]
        assert f"{name}/ " in architecture, f"docs/architecture.md does not place {folder}/"
    # No feature spelled as a file-name prefix beside its folder.
    for folder in FEATURE_FOLDERS:
        parent, feature = (ROOT / folder).parent, (ROOT / folder).name
        stem = feature.rstrip("s").removesuffix("_copie")
        strays = [p.name for p in parent.glob(f"{stem}_*.py")]
        assert not strays, f"{strays} in {parent.relative_to(ROOT)} belong in {folder}/"


# What may keep values between requests outside the memo (searchapp/memo/): pure helpers whose
# value follows from their arguments alone, bounded by lru_cache's maxsize or by a domain as
# small as the languages; and process state that is not a value of a search (index handles,
# the database's identity, the broker probe, the planner's counts, the active signature set's
# instance per method, re-read on every search; the Xapian cluster's connections per
# configuration and the servers found down, asked again after SEARCH_XAPIAN_RETRY_SECONDS).
PURE_BOUNDED_HELPERS = {
    "searchapp.templatetags.result_html._ordinal",
    "searchapp.templatetags.result_html._date",
    "searchapp.services.ingest.rows._file_name",
    "searchapp.topics.words._latin_voters",
    "searchapp.topics.words._any_latin_voter",
    "searchapp.topics.label_fit._char_em",
    "searchapp.topics.labels._parts_of_speech",
    "searchapp.language_components.stop_words",
    "searchapp.language_components.iso_stop_words",
    "searchapp.selectors.search_results._host",
}
PROCESS_STATE = {
    "searchapp.search.text_index._indexes",
    "searchapp.search.xapian.store._indexes",
    "searchapp.search.xapian._clusters",
    "searchapp.search.xapian.cluster._down_until",
    "searchapp.search.xapian.cluster._long_writers",
    "searchapp.search.owner._database_ids",
    "searchapp.publishing._broker_cache",
    "searchapp.publishing._broker_refreshing",
    "searchapp.services.planner_stats._added",
    "searchapp.services.planner_stats._size_then",
    "searchapp.selectors.signatures._searched",
}


def _kept_values(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """Module-level functions with a cache decorator and module-level empty dicts, by name."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = (
                    target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                )
                if name in ("lru_cache", "cache"):
                    yield node.name, node.lineno
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if value is None:
            continue
        # An empty dict filled as the process runs (a table of constants is not kept state).
        made = (isinstance(value, ast.Dict) and not value.keys) or (
            isinstance(value, ast.Call)
            and not value.args
            and getattr(value.func, "id", getattr(value.func, "attr", ""))
            in ("dict", "OrderedDict")
        )
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if made:
            for target in targets:
                if isinstance(target, ast.Name) and target.id.startswith("_"):
                    yield target.id, node.lineno


def test_nothing_outside_the_memo_keeps_values_between_requests(
    modules: dict[str, Module],
) -> None:
    kept = []
    for name, module in modules.items():
        if not name.startswith("searchapp.") or name.startswith("searchapp.memo"):
            continue
        if "migrations" in module.path.parts:
            continue
        tree = ast.parse(module.path.read_text())
        for value, line in _kept_values(tree):
            if f"{name}.{value}" not in PURE_BOUNDED_HELPERS | PROCESS_STATE:
                kept.append(f"{module.path.relative_to(ROOT)}:{line} {value}")
    assert not kept, "values kept outside searchapp/memo (use memo.get_or_compute):\n" + "\n".join(
        kept
    )
