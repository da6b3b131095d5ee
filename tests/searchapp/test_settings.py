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

from searchapp.env import env_bool, env_choice, env_float, env_int, env_list

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


def _start_django(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "PYTEST_CURRENT_TEST"}
    }
    clean.update(env, DJANGO_SETTINGS_MODULE="searchapp.settings")
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_refuses_the_built_in_secret_key() -> None:
    result = _start_django(DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_production_starts_with_a_real_secret_key() -> None:
    result = _start_django(DEBUG="0", SECRET_KEY="a-long-random-production-secret-key-0123456789")
    assert result.returncode == 0, result.stderr
    assert "started" in result.stdout


def test_debug_is_off_and_csrf_is_on_by_default() -> None:
    assert settings.DEBUG is False
    assert "django.middleware.csrf.CsrfViewMiddleware" in settings.MIDDLEWARE
