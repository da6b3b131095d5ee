"""The readers stay free of Django and of the rest of searchapp, so they run and test alone."""

from __future__ import annotations

import ast
from pathlib import Path

import searchapp.readers

READERS = Path(searchapp.readers.__file__).parent


def _imported_modules(source: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_readers_import_nothing_from_django_or_the_rest_of_searchapp() -> None:
    modules = sorted(READERS.glob("*.py"))
    assert len(modules) > 1
    for module in modules:
        for name in _imported_modules(module):
            top = name.split(".")[0]
            assert top != "django", f"{module.name} imports {name}"
            if top == "searchapp":
                assert name.startswith("searchapp.readers"), f"{module.name} imports {name}"
