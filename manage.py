#!/usr/bin/env python
"""Django's command-line utility."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from searchapp.background import BACKGROUND_COMMANDS, lower_priority

    if len(sys.argv) > 1 and sys.argv[1] in BACKGROUND_COMMANDS:
        lower_priority()  # before Django's start-up, most of a short command's CPU
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
