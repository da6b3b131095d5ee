"""Typed readers for environment variables that fail loudly on a bad value.

In the style of healthchecks' ``hc/settings.py``: every setting that can come from the
environment goes through one of these helpers, so a typo such as ``DEBUG=ture`` stops the
process at start-up with a message naming the variable, instead of silently meaning False.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

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


def _host_port(name: str, raw: str, address: str) -> tuple[str, int]:
    host, colon, port = address.strip().rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ImproperlyConfigured(
            f"{name}={raw!r}: {address.strip()!r} is not host:port (a port from 1 to 65535)"
        )
    return host, int(port)


def env_shards(name: str) -> list[tuple[tuple[str, int], list[tuple[str, int]]]]:
    """Shards of a search cluster, each ``master>replica,replica`` and separated by ``;``: the
    master's writable server, then its read replicas' servers (none: reads go to the master).
    Empty or unset: no cluster. Each address is host:port."""
    raw = os.environ.get(name, "")
    shards: list[tuple[tuple[str, int], list[tuple[str, int]]]] = []
    for part in raw.split(";"):
        if not part.strip():
            continue
        master, _sep, replicas = part.partition(">")
        shards.append(
            (
                _host_port(name, raw, master),
                [_host_port(name, raw, r) for r in replicas.split(",") if r.strip()],
            )
        )
    return shards


# Management commands that serve requests: like gunicorn and celery, they need a real SECRET_KEY
# (or DEBUG=1) and never get the development key file.
_SERVING_COMMANDS = {"runserver", "testserver", "runserver_plus"}


def is_offline_management_command(argv: list[str] | None = None) -> bool:
    """Whether this process is ``manage.py COMMAND`` for a command that serves nothing.

    ``manage.py createsuperuser``, ``ingest``, ``migrate``... write the database and exit; none
    of them signs a cookie, a session or a token a server will later trust, so the key they run
    with does not have to be the production one.
    """
    argv = sys.argv if argv is None else argv
    if not argv or Path(argv[0]).name != "manage.py":
        return False
    command = argv[1] if len(argv) > 1 else ""
    return command not in _SERVING_COMMANDS


def development_secret_key(path: Path) -> str:
    """A random key kept in ``path``, created (mode 0600) the first time it is needed.

    Two processes creating it at once both end up reading the one that won the exclusive
    create, so every command of a checkout runs with the same key.
    """
    try:
        key = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    key = secrets.token_urlsafe(50)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key + "\n")
    return key
