from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_dedup_never_imports_django():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import dedup, dedup.pairs, dedup.lsh;"
        "import dedup.minhash, dedup.shingle;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('django', 'datasketch', 'rensa', 'searchapp'));"
        "print(','.join(bad) or 'clean')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "clean"
