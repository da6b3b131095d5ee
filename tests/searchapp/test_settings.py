"""Settings come from the environment and fail loudly on a bad value or an unsafe production set-up."""
# ruff: noqa: E501 - descriptive test names read better unwrapped

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_choice, env_float, env_int, env_list, env_shards

ROOT = Path(__file__).resolve().parents[2]


def test_a_typo_in_a_boolean_stops_the_process_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_FLAG", "ture")
    with pytest.raises(ImproperlyConfigured, match="SOME_FLAG='ture' is not a boolean"):
        env_bool("SOME_FLAG", False)
    monkeypatch.setenv("SOME_FLAG", "Yes")
    assert env_bool("SOME_FLAG", False) is True


def test_numbers_are_checked_against_their_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_LIMIT", "0")
    with pytest.raises(ImproperlyConfigured, match="SOME_LIMIT=0 is below the minimum 1"):
        env_int("SOME_LIMIT", 5, minimum=1)
    monkeypatch.setenv("SOME_LIMIT", "many")
    with pytest.raises(ImproperlyConfigured, match="is not an integer"):
        env_int("SOME_LIMIT", 5)
    monkeypatch.setenv("SOME_RATIO", "1.5")
    with pytest.raises(ImproperlyConfigured, match=r"above the maximum 1\.0"):
        env_float("SOME_RATIO", 0.5, maximum=1.0)


def test_lists_and_choices_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_HOSTS", " a.example , b.example,,")
    assert env_list("SOME_HOSTS", []) == ["a.example", "b.example"]
    monkeypatch.setenv("SOME_METHOD", "lsh")
    with pytest.raises(ImproperlyConfigured, match="must be one of minhash, simhash"):
        env_choice("SOME_METHOD", "minhash", ("minhash", "simhash"))


def test_search_shards_are_parsed_and_a_bad_address_stops_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert env_shards("SOME_SHARDS") == []
    monkeypatch.setenv("SOME_SHARDS", "m1:8100>r1:8111, r2:8112; m2:8200")
    assert env_shards("SOME_SHARDS") == [
        (("m1", 8100), [("r1", 8111), ("r2", 8112)]),
        (("m2", 8200), []),
    ]
    for bad, named in (("m1>r1:8111", "'m1'"), ("m1:8100>r1:99999", "'r1:99999'")):
        monkeypatch.setenv("SOME_SHARDS", bad)
        with pytest.raises(ImproperlyConfigured, match=f"SOME_SHARDS=.*{named} is not host:port"):
            env_shards("SOME_SHARDS")


# Variables of the security settings: a test sets its own, whatever the caller's shell has.
_SECURITY_VARIABLES = {
    "SECRET_KEY",
    "DEBUG",
    "PYTEST_CURRENT_TEST",
    "SECURE_SSL_REDIRECT",
    "SECURE_COOKIES",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "CONTENT_SECURITY_POLICY",
}
PRODUCTION_SECRET_KEY = "a-long-random-production-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"


def _django(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in _SECURITY_VARIABLES}
    clean.update(env, DJANGO_SETTINGS_MODULE="config.settings")
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _start_django(**env: str) -> subprocess.CompletedProcess[str]:
    return _django(["-c", "import django; django.setup(); print('started')"], **env)


def test_production_refuses_the_built_in_secret_key() -> None:
    result = _start_django(DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_the_readmes_manage_commands_work_without_debug_or_a_secret_key(tmp_path: Path) -> None:
    # `manage.py createsuperuser`, `ingest`, ... as the README writes them: no DEBUG, no SECRET_KEY.
    show_key = ["manage.py", "shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)"]
    first = _django(show_key, VAR_DIR=str(tmp_path))
    assert first.returncode == 0, first.stderr
    key_file = tmp_path / "dev-secret-key"
    key = first.stdout.strip().splitlines()[-1]
    assert key == key_file.read_text().strip()
    assert len(key) >= 50 and key != "dev-insecure-secret-key-change-me"
    assert key_file.stat().st_mode & 0o077 == 0  # readable by its owner only
    second = _django(show_key, VAR_DIR=str(tmp_path))
    assert second.stdout.strip().splitlines()[-1] == key  # one key per checkout, kept


def test_servers_still_refuse_to_start_without_a_secret_key(tmp_path: Path) -> None:
    # runserver serves requests: like gunicorn and celery it needs SECRET_KEY or DEBUG=1.
    result = _django(["manage.py", "runserver", "--noreload", "127.0.0.1:0"], VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr
    assert not (tmp_path / "dev-secret-key").exists()


def test_production_starts_with_a_real_secret_key() -> None:
    result = _start_django(DEBUG="0", SECRET_KEY="a-long-random-production-secret-key-0123456789")
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout


def test_debug_is_off_and_csrf_is_on_by_default() -> None:
    assert settings.DEBUG is False
    assert "django.middleware.csrf.CsrfViewMiddleware" in settings.MIDDLEWARE


def test_check_deploy_finds_nothing_to_fix_with_the_documented_production_settings() -> None:
    # The README's production variables behind HTTPS; HSTS follows SECURE_SSL_REDIRECT.
    result = _django(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        SECRET_KEY=PRODUCTION_SECRET_KEY,
        DEBUG="0",
        SECURE_SSL_REDIRECT="1",
        SECURE_COOKIES="1",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize(
    ("env", "seconds"),
    [
        ({}, 0),  # plain HTTP (make run, a first try): no HSTS, it would stick in browsers
        ({"SECURE_SSL_REDIRECT": "1"}, 31_536_000),  # HTTPS only: a year of HSTS
        ({"SECURE_SSL_REDIRECT": "1", "SECURE_HSTS_SECONDS": "3600"}, 3600),
        ({"SECURE_HSTS_SECONDS": "60"}, 60),  # TLS ends at a proxy that redirects itself
    ],
)
def test_hsts_is_off_on_plain_http_and_on_behind_https_unless_set(env, seconds) -> None:  # type: ignore[no-untyped-def]
    script = "import django; django.setup(); from django.conf import settings; print(settings.SECURE_HSTS_SECONDS)"
    result = _django(["-c", script], SECRET_KEY=PRODUCTION_SECRET_KEY, DEBUG="0", **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(seconds)]


def test_a_negative_hsts_duration_stops_the_process() -> None:
    result = _start_django(DEBUG="1", SECURE_HSTS_SECONDS="-1")
    assert result.returncode != 0
    assert "SECURE_HSTS_SECONDS=-1 is below the minimum 0" in result.stderr


_PREPARED_COUNT = """
import django
django.setup()
from django.db import connection
with connection.cursor() as cursor:
    for n in range(3):  # the same statement three times, as every search runs its reads
        cursor.execute("SELECT oid FROM pg_class WHERE relname = %s", ["pg_class"])
    cursor.execute("SELECT count(*) FROM pg_prepared_statements")
    print("prepared", cursor.fetchone()[0])
"""


@pytest.mark.services
@pytest.mark.parametrize(("setting", "prepared"), [({}, True), ({"DATABASE_PREPARED_STATEMENTS": "0"}, False)])
def test_postgresql_statements_are_prepared_once_per_connection_unless_turned_off(setting, prepared) -> None:  # type: ignore[no-untyped-def]
    url = os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    result = _django(["-c", _PREPARED_COUNT], DEBUG="1", DATABASE_URL=url, **setting)
    if "could not connect" in result.stderr or "Connection refused" in result.stderr:
        pytest.skip(f"needs PostgreSQL at {url}")
    assert result.returncode == 0, result.stderr
    count = int(result.stdout.split("prepared")[-1])
    assert (count > 0) is prepared, result.stdout


def test_a_shared_cache_that_is_not_redis_stops_the_process() -> None:
    result = _start_django(DEBUG="1", SEARCH_SHARED_CACHE_URL="memcached://127.0.0.1:11211")
    assert result.returncode != 0
    assert "SEARCH_SHARED_CACHE_URL='memcached://127.0.0.1:11211' is not a Redis URL" in result.stderr
    started = _start_django(DEBUG="1", SEARCH_SHARED_CACHE_URL="redis://127.0.0.1:6379/6")
    assert started.returncode == 0, started.stderr


def test_a_background_wait_for_sqlite_as_long_as_a_stalled_job_stops_the_process(
    tmp_path: Path,
) -> None:
    # A worker still waiting for the write lock would be taken for a lost one and its job failed.
    sqlite = {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = _start_django(**sqlite, SQLITE_BACKGROUND_TIMEOUT="600")
    assert result.returncode != 0
    assert "SQLITE_BACKGROUND_TIMEOUT=600 must be below JOB_STALL_SECONDS=600" in result.stderr
    started = _start_django(**sqlite, SQLITE_BACKGROUND_TIMEOUT="600", JOB_STALL_SECONDS="900")
    assert started.returncode == 0, started.stderr


def _variables_settings_reads() -> set[str]:
    """The names config/settings.py passes to the env_* helpers of config/env.py."""
    import ast

    tree = ast.parse((ROOT / "config" / "settings.py").read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id.startswith("env_")
        ):
            first = node.args[0]
            assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
                f"config/settings.py line {node.lineno}: name the variable as a literal"
            )
            names.add(first.value)
    return names


def test_every_variable_settings_reads_has_its_section_in_docs_configuration_and_no_other() -> None:
    import re

    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented = re.findall(r"^## `([A-Z][A-Z0-9_]*)`$", text, flags=re.MULTILINE)
    assert len(documented) == len(set(documented)), "a variable has two sections"
    read = _variables_settings_reads()
    assert read - set(documented) == set(), "read by config/settings.py, not in docs/configuration.md"
    assert set(documented) - read == set(), "in docs/configuration.md, not read by config/settings.py"
    for name in documented:
        section = text.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
        for field in ("- Default:", "- Valid:", "- What it does:", "- When to change it:"):
            assert field in section, f"{name}'s section has no {field!r}"
