"""Suite-wide rules.

A test marked ``services`` or ``browser`` may skip on a machine without PostgreSQL/Redis or
chromium, but CI sets REQUIRE_SERVICES=1 / REQUIRE_BROWSER=1 and there a skip of such a test is
turned into a failure (a ``spark`` test likewise under REQUIRE_SPARK=1 or CI=true: Java 17 and
the ``spark`` extra), so a missing service can never pass silently.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

_REQUIRED_BY_MARK = {
    "services": "REQUIRE_SERVICES",
    "browser": "REQUIRE_BROWSER",
    "spark": "REQUIRE_SPARK",
}


def _required(variable: str) -> bool:
    # CI (CI=true) needs Java and pyspark as much as it needs the services: a Spark test that
    # skips there fails.
    return os.environ.get(variable) == "1" or (
        variable == "REQUIRE_SPARK" and os.environ.get("CI") == "true"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if not report.skipped:
        return
    for mark, variable in _REQUIRED_BY_MARK.items():
        if item.get_closest_marker(mark) is not None and _required(variable):
            report.outcome = "failed"
            reason = (
                report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            )
            report.longrepr = f"{item.nodeid} was skipped but {variable}=1 requires it: {reason}"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared corpora are not at {SHARED_DATA}")
    return SHARED_DATA
