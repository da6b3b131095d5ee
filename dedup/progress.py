"""A tiny text progress bar for the command line (standard library only)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """Callable ``bar(done, total)`` that redraws one stderr line: ``label [####....]  45% 9/20``.

    Parameters:
        label: text before the bar.
        stream: where to draw (default ``sys.stderr``).
        enabled: draw at all; ``None`` means only when ``stream`` is a terminal, so logs and
            pipes are not filled with carriage returns.
        width: bar width in characters.
        min_interval: seconds between redraws (the final 100% is always drawn).
    """

    def __init__(
        self,
        label: str = "",
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        width: int = 30,
        min_interval: float = 0.1,
    ) -> None:
        if width < 1:
            raise ValueError(f"width must be >= 1, got {width}")
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) if enabled is None else enabled
        self.width = width
        self.min_interval = min_interval
        self._last_draw = -float("inf")
        self._drawn = False
        self._finished = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or self._finished:
            return
        now = time.monotonic()
        complete = total <= 0 or done >= total
        if not complete and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        fraction = 1.0 if total <= 0 else min(max(done / total, 0.0), 1.0)
        filled = round(fraction * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        prefix = f"{self.label} " if self.label else ""
        self.stream.write(f"\r{prefix}[{bar}] {fraction:4.0%} {done}/{total}")
        self._drawn = True
        if complete:
            self.close()
        else:
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line (if one was drawn) so later output starts on a fresh line."""
        if self._drawn and not self._finished:
            self.stream.write("\n")
            self.stream.flush()
        self._finished = True
