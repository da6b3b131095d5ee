"""WSGI entry point: the web process (gunicorn's workers, ``manage.py runserver``).

Before it serves, each web process loads what its first requests would otherwise load one at a
time (``warm_up``): the URL configuration with every view and the libraries they import
(scikit-learn, scipy, the search index's), LemmInflect's lexicon for the topics' labels, the
result list's Jinja2 templates, and one small clustering (scikit-learn's and scipy's first
calls). A new worker's first search page cost about 1.1 s of CPU more than the next one, which
a loaded machine stretched to several seconds (bench/load/README.md,
bench/web_first_request.py); a restart of the database during such a request turned it into a
503 long after the database was back. The warm-up reads no database: the topics' background
sample (``selectors.topics.background``) is still built by the first search that shows topics.
Celery workers and management commands never load this module, so they never pay for it.
"""

from __future__ import annotations

import gc
import logging
import os
import time

from django.core.wsgi import get_wsgi_application
from django.template import engines
from django.urls import get_resolver

from searchapp.topics import labels as topic_labels
from searchapp.topics.clustering import TopicDoc, topic_clusters

logger = logging.getLogger(__name__)

# A result list with two plain topics, so the clustering and the labelling run end to end.
_WARM_UP_DOCS = [
    TopicDoc(id=n, title=f"{kind} report {n}", text=f"The {kind} {word} of the week.", lang="en")
    for n, (kind, word) in enumerate(
        [
            ("harbour", "ferry timetable"),
            ("harbour", "ferry strike"),
            ("harbour", "ferry fares"),
            ("energy", "solar farm"),
            ("energy", "solar panels"),
            ("energy", "solar prices"),
        ]
    )
]


# The search page's list of groups (templates/jinja2/results/).
_RESULT_TEMPLATES = (
    "results/groups.html",
    "results/group.html",
    "results/hit.html",
    "results/hit_source.html",
)


def warm_up() -> float:
    """Load the URL configuration (every view and what it imports), the topics' lexicon and the
    clustering's first calls; returns the CPU seconds spent."""
    started = time.process_time()
    # Django imports the URL configuration on the first request; the API's schema is built then.
    get_resolver().url_patterns  # noqa: B018 - the property imports and caches them
    # The Jinja2 engine and the result list's templates, compiled (~40 ms of CPU otherwise
    # spent by the first search page).
    jinja2 = engines["jinja2"]
    for name in _RESULT_TEMPLATES:
        jinja2.get_template(name)
    topic_labels.load_lexicon()
    topic_clusters(_WARM_UP_DOCS, query="report", max_topics=2, subtopics=True)
    return time.process_time() - started


# Allocations between two collections of the youngest generation (Python's default: 700). A
# search allocates some hundred thousand objects, nearly all freed by reference counting, so
# the default ran a young collection every few hundred of them (bench/load/README.md).
GC_YOUNG_THRESHOLD = 10_000


def settle_memory() -> None:
    """Keep the collector off what lives as long as the process: the modules, the URL
    configuration, the templates and the lexicon loaded so far are moved out of its
    generations (``gc.freeze``), and the youngest generation is collected less often.

    Why: a web process holds some 300,000 objects from its start; every full collection walked
    them all again, and a young one ran every 700 allocations. Together about 1.4 ms of CPU a
    never-repeated grouped search at 1M documents, 0.3 ms after this (bench/load/README.md).
    Nothing is kept that reference counting would free: the collector only finds cycles."""
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), middle, old)


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
logger.info("web process warmed up in %.2f s of CPU", warm_up())
settle_memory()
