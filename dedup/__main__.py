"""``python -m dedup pairs|clusters INPUT.jsonl`` (see dedup.cli)."""

from __future__ import annotations

from dedup.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
