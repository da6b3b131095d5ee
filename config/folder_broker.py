"""The embedded broker: kombu's filesystem transport, with each message written whole.

kombu's filesystem channel (5.7) creates a message's file under its final name and then writes
the payload; a worker listing the folder at that moment moves the file away and reads it
without a lock. It gets an empty or cut payload, and kombu's JSON decoding of it stops the
worker ("Unrecoverable error: JSONDecodeError"). An ingest queues a task per batch while the
workers poll the folder ten times a second, so a long load met this. Here the payload goes to a
name the readers skip (it does not end in ``<queue>.msg``) and is renamed into place, which
POSIX makes atomic within a folder: a reader sees either no message or the whole of it.

A producer killed between the write and the rename (a web process stopped mid-publish) leaves
its partial file behind; nothing reads it, so a channel removes those older than
``PARTIAL_MAX_AGE`` from the folder it reads when it opens (a worker, at its start).

``config.celery`` makes ``Transport`` the one kombu uses for a ``filesystem://`` URL; the rest
(folders, polling, fanout) is kombu's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from pathlib import Path
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

__all__ = ["PARTIAL_MAX_AGE", "Channel", "Transport"]

logger = logging.getLogger(__name__)

# A suffix after ".msg" keeps a file being written out of every listing of a queue: kombu
# matches the whole text after a message name's first dot against "<queue>.msg".
_PARTIAL_SUFFIX = ".partial"
# Seconds after which a partial message is taken for one whose writer died: a message is
# written in milliseconds (a few MB at most), so an hour leaves any live writer alone.
PARTIAL_MAX_AGE = 3600.0


def _remove_stale_partials(folder: str) -> int:
    """Remove the partial messages in ``folder`` older than PARTIAL_MAX_AGE; how many."""
    cutoff = time.time() - PARTIAL_MAX_AGE
    removed = 0
    with contextlib.suppress(OSError):  # no folder yet: kombu creates it when it writes
        for path in Path(folder).glob(f"*.msg{_PARTIAL_SUFFIX}"):
            with contextlib.suppress(OSError):  # renamed or removed by someone else meanwhile
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
    if removed:
        logger.warning(
            "removed %d partial message(s) left in %s by a writer that died", removed, folder
        )
    return removed


class Channel(filesystem.Channel):
    """kombu's filesystem channel whose messages appear in the folder only once complete."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _remove_stale_partials(self.data_folder_in)

    # kombu's own two bases name the payload differently; this keeps the filesystem one's name.
    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        """Put ``payload`` on ``queue``: written under a temporary name, then renamed."""
        # The name is kombu's (time, then uuid: the readers take messages in name order).
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + _PARTIAL_SUFFIX
        try:
            with open(partial, "wb") as out:
                out.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            with contextlib.suppress(OSError):  # the failure itself is reported below
                os.remove(partial)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    """kombu's filesystem transport with the whole-message channel above."""

    Channel = Channel

    @property
    def default_connection_params(self) -> dict[str, Any]:
        # A folder has no host. kombu's default (hostname "localhost") made every process that
        # publishes a task, manage.py ingest among them, log "No hostname was supplied.
        # Reverting to default 'localhost'" in the middle of its progress bar.
        return {}
