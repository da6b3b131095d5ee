"""The web process warms up as it starts (config/wsgi.py): what its first search page would
load, it loads before serving, and without the database, so a worker starts while the database
is down. (What it saves is measured by bench/web_first_request.py, not timed here.)"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import sys
import config.wsgi
from django.db import connection
from searchapp.topics import labels as topic_labels
loaded = topic_labels._parts_of_speech.cache_info().currsize >= 1
print("lexicon", loaded and "lemminflect" in sys.modules)
print("views", "searchapp.web.views" in sys.modules and "searchapp.web.api" in sys.modules)
print("connection", connection.connection is not None)
from django.template import engines
compiled = {name for _loader, name in engines["jinja2"].env.cache.keys()}
print("templates", "results/group.html" in compiled and "results/hit_source.html" in compiled)
"""


def test_a_web_process_warms_up_without_the_database(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(32),
        ALLOWED_HOSTS="127.0.0.1",
        # Nothing listens there: any query during the warm-up would fail the start.
        DATABASE_URL="postgres://nobody@127.0.0.1:9/none",
        VAR_DIR=str(tmp_path / "var"),
        SEARCH_INDEX_DIR=str(tmp_path / "var" / "search-index"),
        CELERY_BROKER_URL="filesystem://",
        LOG_LEVEL="ERROR",
    )
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split("\n")[:4] == [
        "lexicon True", "views True", "connection False", "templates True"
    ]
