"""manage.py rebuild_signatures: start (and optionally follow) background signature rebuilds."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from searchapp.grouping_params import METHODS
from searchapp.models import Document, Job
from searchapp.selectors.signatures import active_signature_set, signature_set_outdated
from searchapp.services.signatures.rebuild import job_cancel, signature_set_rebuild
from searchapp.services.signatures.sets import signature_set_build_inline


class Command(BaseCommand):
    help = (
        "Rebuild the signatures as a new version in the background (Celery workers, in chunks); "
        "searches keep using the active version until the new one is complete."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--method", choices=[*METHODS, "all"], default="all")
        parser.add_argument(
            "--wait", action="store_true", help="follow the job(s) with a progress bar until done"
        )
        parser.add_argument(
            "--if-missing",
            action="store_true",
            help=(
                "only build methods without an active version; such a first build runs inline "
                "(there is no previous version to serve meanwhile and no worker needs to be up)"
            ),
        )
        parser.add_argument(
            "--if-outdated",
            action="store_true",
            help=(
                "only build methods without an active version or whose active version was made "
                "with an older tokenisation (before every language was supported)"
            ),
        )
        parser.add_argument(
            "--inline", action="store_true", help="build in this process instead of the workers"
        )
        parser.add_argument(
            "--cancel", type=int, metavar="JOB_ID", help="cancel a running rebuild job"
        )
        parser.add_argument(
            "--poll", type=float, default=0.5, help="seconds between progress polls (--wait)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["cancel"] is not None:
            job = Job.objects.filter(pk=options["cancel"], kind=Job.Kind.REBUILD).first()
            if job is None:
                raise CommandError(f"no rebuild job #{options['cancel']}")
            job = job_cancel(job=job)
            self.stdout.write(f"job #{job.pk}: {job.state}")
            return
        methods = list(METHODS) if options["method"] == "all" else [options["method"]]
        if options["if_missing"]:
            methods = [m for m in methods if active_signature_set(m) is None]
            if not methods:
                self.stdout.write(
                    "signatures: every requested method has an active version; nothing to do"
                )
                return
        if options["if_outdated"]:
            methods = [
                m
                for m in methods
                if (active := active_signature_set(m)) is None
                or signature_set_outdated(active) is not None
            ]
            if not methods:
                self.stdout.write("signatures: every requested method is current; nothing to do")
                return
        inline = options["inline"] or options["if_missing"]
        if inline:
            total = Document.objects.count()
            for method in methods:
                with tqdm(
                    total=total, desc=f"{method} signatures", unit="doc", disable=None
                ) as bar:
                    sset = signature_set_build_inline(method=method, progress=bar.update)
                self.stdout.write(f"{method} v{sset.pk} active ({total} documents)")
            return
        jobs = [signature_set_rebuild(method=m) for m in methods]
        for job in jobs:
            self.stdout.write(
                f"rebuild job #{job.pk}: {job.params['method']}, {job.total} documents, {job.state}"
            )
        if options["wait"]:
            self._follow(jobs, poll=options["poll"])

    def _follow(self, jobs: list[Job], *, poll: float) -> None:
        failed = []
        for job in jobs:
            with tqdm(
                total=job.total, desc=f"{job.params['method']} #{job.pk}", unit="doc", disable=None
            ) as bar:
                try:
                    while True:
                        job.refresh_from_db()
                        bar.n = job.done
                        bar.set_postfix_str(job.state)
                        bar.refresh()
                        if job.is_finished:
                            break
                        time.sleep(poll)
                except KeyboardInterrupt:
                    raise CommandError(
                        f"stopped waiting; job #{job.pk} goes on (cancel it with --cancel {job.pk})"
                    ) from None
            self.stdout.write(
                f"job #{job.pk}: {job.state}{' - ' + job.message if job.message else ''}"
            )
            for error in job.errors:
                self.stderr.write(f"  error: {error}")
            if job.state != Job.State.DONE:
                failed.append(job)
        if failed:
            raise CommandError(
                f"{len(failed)} rebuild job(s) did not finish: "
                + ", ".join(str(j.pk) for j in failed)
            )
