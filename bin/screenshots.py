#!/usr/bin/env python3
"""Regenerate the README's screenshots of the main pages into docs/screenshots/.

    .venv/bin/python bin/screenshots.py                 # starts its own server on the demo corpus
    .venv/bin/python bin/screenshots.py --url http://127.0.0.1:8000 \\
        --user editor --password '…'                    # or shoots a running `make run`

Without ``--url`` it builds a private demo site in a temporary folder (SQLite, the search index,
the signatures and the duplicate clusters of the 3,000-document demo corpus, a throwaway staff
account), serves it with ``manage.py runserver`` and removes it afterwards, so the pictures are
the same on every machine and no database of yours is touched. With ``--url``, the staff pages
(duplicates report, settings) need ``--user`` and ``--password`` of a staff account; without them
they are skipped.

Playwright drives Debian's chromium (/usr/bin/chromium, as the browser tests do): desktop
1366x900 and phone 390x844, light colour scheme, the first screen of each page (the pages a
reader meets: results with a group opened, results on a phone, "why?", compare, a document
opened from the results, the empty search page, the duplicates report, the settings).
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
DESKTOP: dict[str, Any] = {"viewport": {"width": 1366, "height": 900}}
PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
}
QUERY = "energy"
STAFF_USER = "screenshots"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError as exc:
            if time.monotonic() > deadline:
                message = f"the server at {url} did not answer within {seconds:.0f} s ({exc})"
                raise SystemExit(message) from None
            time.sleep(0.3)


@contextmanager
def demo_site() -> Iterator[tuple[str, str, str]]:
    """A private demo site: (its URL, a staff user, its password); removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="screenshots-") as var:
        password = secrets.token_urlsafe(16)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DATABASE_", "CELERY_", "SEARCH_", "MEDIA_", "SECRET_KEY"))
        }
        env.update(
            VAR_DIR=var,
            DEBUG="1",
            CELERY_TASK_ALWAYS_EAGER="1",  # no worker: signing and clusters run inline
            DJANGO_SUPERUSER_PASSWORD=password,
        )
        manage = [sys.executable, str(ROOT / "manage.py")]

        def run(*args: str) -> None:
            command = [*manage, *args]
            subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)

        print("building the demo site (migrate, 3,000 documents, signatures, clusters) …")
        run("migrate", "--noinput")
        run("generate_demo_corpus", "--no-progress")
        run("reindex", "--pending")
        run("rebuild_signatures", "--method", "all", "--wait")
        run("createsuperuser", "--noinput", "--username", STAFF_USER, "--email", "s@example.org")
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until_up(url + "/")
            yield url, STAFF_USER, password
        finally:
            server.terminate()
            server.wait(timeout=20)


def _settle(page: Any) -> None:
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(200)


def _shoot(page: Any, name: str) -> None:
    path = OUT / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    print(f"wrote {path.relative_to(ROOT)}")


def _log_in(page: Any, base: str, user: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/?next=/staff/")
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/staff/$"))


def shoot_all(base: str, user: str | None, password: str | None) -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        desktop = browser.new_context(color_scheme="light", **DESKTOP).new_page()
        desktop.goto(f"{base}/")
        _settle(desktop)
        _shoot(desktop, "home")

        desktop.goto(f"{base}/?q={QUERY}")
        _settle(desktop)
        folded = desktop.locator("li.group:has(details.similar)").first
        folded.locator("details.similar > summary").click()
        folded.scroll_into_view_if_needed()
        desktop.evaluate("window.scrollTo(0, 0)")
        why_href = folded.locator("a.why").first.get_attribute("href")
        document_href = folded.locator(".hit-title a").first.get_attribute("href")
        _shoot(desktop, "results-desktop")

        phone = browser.new_context(color_scheme="light", **PHONE).new_page()
        phone.goto(f"{base}/?q={QUERY}")
        _settle(phone)
        _shoot(phone, "results-phone")

        desktop.goto(f"{base}{why_href}")
        _settle(desktop)
        _shoot(desktop, "why")

        desktop.goto(f"{base}/compare/?q={QUERY}")
        _settle(desktop)
        _shoot(desktop, "compare")

        desktop.goto(f"{base}{document_href}")
        _settle(desktop)
        _shoot(desktop, "document")

        if user and password:
            _log_in(desktop, base, user, password)
            desktop.goto(f"{base}/staff/duplicates/")
            _settle(desktop)
            _shoot(desktop, "duplicates-report")
            desktop.goto(f"{base}/staff/settings/")
            _settle(desktop)
            _shoot(desktop, "settings")
        else:
            print("staff pages skipped: give --user and --password of a staff account")
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server (default: start a private demo site)")
    parser.add_argument("--user", help="a staff account on --url, for the staff pages")
    parser.add_argument("--password", help="its password")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    if args.url:
        _wait_until_up(args.url.rstrip("/") + "/", seconds=5)
        shoot_all(args.url.rstrip("/"), args.user, args.password)
        return
    with demo_site() as (url, user, password):
        shoot_all(url, user, password)


if __name__ == "__main__":
    main()
