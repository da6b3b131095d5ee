"""Typed readers for environment variables that fail loudly on a bad value.

In the style of healthchecks' ``hc/settings.py``: every setting that can come from the
environment goes through one of these helpers, so a typo such as ``DEBUG=ture`` stops the
process at start-up with a message naming the variable, instead of silently meaning False.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean (use one of 1/0, true/false, yes/no, on/off)"
    )


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum {minimum}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={value} is above the maximum {maximum}")
    return value


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum {minimum}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={value} is above the maximum {maximum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).strip()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of {', '.join(choices)}")
    return value
