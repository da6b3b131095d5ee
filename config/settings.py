"""Django settings, read from the environment (each variable: docs/configuration.md).

Defaults are the embedded set-up a fresh machine needs: SQLite, a tantivy search index and a
Celery broker that needs no server (kombu's filesystem transport under ``var/``). Production
points DATABASE_URL at PostgreSQL and CELERY_BROKER_URL at Redis or RabbitMQ.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    development_secret_key,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_shards,
    env_str,
    is_offline_management_command,
)
from searchapp import grouping_params

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)

_DEV_SECRET_KEY = "dev-insecure-secret-key-change-me"
# The key of the documented `manage.py` commands (createsuperuser, ingest, rebuild_signatures,
# migrate, ...) in a checkout where neither SECRET_KEY nor DEBUG is set: random, made on first
# use, private to this checkout (see is_offline_management_command for why that is safe).
DEV_SECRET_KEY_FILE = VAR_DIR / "dev-secret-key"
SECRET_KEY = env_str("SECRET_KEY", "") or _DEV_SECRET_KEY
# The test runner imports these settings before any test code can set variables, so a pytest
# process is one place the development key is tolerated with DEBUG off.
_UNDER_PYTEST = "pytest" in sys.modules
# The other is mypy: django-stubs' plugin imports these settings (django.setup()) to learn the
# models, and neither serves requests nor signs anything. Tolerating it here keeps a bare `mypy`
# (and `make lint`) working without exporting DEBUG=1, which would type-check nothing different.
_UNDER_MYPY_PLUGIN = "mypy_django_plugin" in sys.modules
if SECRET_KEY == _DEV_SECRET_KEY and not DEBUG and not (_UNDER_PYTEST or _UNDER_MYPY_PLUGIN):
    # The servers (gunicorn, celery, runserver) still refuse: production cannot start on a key
    # nobody chose. A one-off command writing the database needs no shared key.
    if not env_str("SECRET_KEY", "") and is_offline_management_command():
        SECRET_KEY = development_secret_key(DEV_SECRET_KEY_FILE)
    else:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set: refusing to start with the built-in development key "
            "while DEBUG is off. "
            "Set SECRET_KEY in the environment (or DEBUG=1 for local development)."
        )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "axes",
    # Listed so /api/docs is served from django-ninja's own static files (its fallback loads
    # Swagger UI from a CDN with an inline script, which the Content-Security-Policy blocks).
    "ninja",
    "searchapp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "searchapp.web.middleware.ContentSecurityPolicyMiddleware",
    "searchapp.web.middleware.DatabaseUnavailableMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "searchapp.web.context_processors.search_access",
            ],
        },
    },
    # The search page's list of groups only (searchapp/templatetags/result_html.py says why);
    # Django's templates above render everything else and call it.
    {
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "searchapp.templatetags.result_html.environment"},
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        # Kept open between requests by default: opening one per request was a tenth of a
        # search's CPU on PostgreSQL (profiled at 1M), and an SQLite connection's page cache
        # (SQLITE_CACHE_MB) only helps a connection that lives. 0 closes after each request.
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        # A kept connection is checked before each request reuses it, so one that a database
        # restart broke is replaced instead of failing the request.
        conn_health_checks=True,
    )
}
# PostgreSQL: parameters bound on the server, and a statement prepared once a connection has
# run it twice (psycopg's prepare_threshold), so it is parsed and planned once per connection:
# a search runs the same few statements every time, and planning them was a fifth of the
# database's CPU a search at 1M documents (pg_stat_statements at 1M). Turn off behind a
# pooler in transaction mode that cannot keep a connection's prepared statements: the operator's
# decision, since the app cannot tell such a pooler from the server.
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and (
    DATABASE_PREPARED_STATEMENTS
):
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"server_side_binding": True, "prepare_threshold": 2}
    )
# Page cache per SQLite connection and memory-mapped reads. SQLite's default cache (2 MB) is
# smaller than the indexes of a large corpus: at 200k documents ingest spent most of its time
# re-reading index pages (the (corpus, external_id) B-tree, and a content_hash one since
# dropped) from the OS.
SQLITE_CACHE_MB = env_int("SQLITE_CACHE_MB", 256, minimum=2)
SQLITE_MMAP_MB = env_int("SQLITE_MMAP_MB", 1024, minimum=0)
# Seconds a writer waits for SQLite's one write lock before "database is locked": the web's
# requests (a 503 with Retry-After past it), and background processes - Celery's workers and
# `manage.py ingest` (searchapp.background) - which nobody waits on. Their longer wait covers the
# band keys' index that a bulk load builds at its end, which holds the lock about 75 s at 10M
# documents (services.signatures.band_index.ASIDE_MAX_ROWS); it stays below JOB_STALL_SECONDS, past
# which a job that shows no progress is taken for lost.
SQLITE_TIMEOUT = env_int("SQLITE_TIMEOUT", 30, minimum=1)
SQLITE_BACKGROUND_TIMEOUT = env_int("SQLITE_BACKGROUND_TIMEOUT", 300, minimum=1)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes write this file at once (the worker's signature batches and rebuild
    # chunks, `manage.py ingest`, the web server's staff decisions and uploads). WAL lets them
    # read while one writes; the timeout makes a writer wait for the write lock instead of
    # failing with "database is locked".
    #
    # Why IMMEDIATE: SQLite's default (deferred) transaction takes the write lock only at its
    # first write. One that reads first - ingest's batch (which ids exist?), a staff decision
    # (update_or_create), a rebuild chunk's start and finish (select_for_update is a no-op on
    # SQLite) - and then writes after another connection has committed gets SQLITE_BUSY at once,
    # without waiting out the timeout (its snapshot is stale, so waiting could not help).
    # BEGIN IMMEDIATE takes the write lock when the transaction opens, waiting up to `timeout`
    # for it, so such transactions queue instead of failing. The price: every transaction.atomic()
    # block holds the write lock for its whole length, reads included, so write transactions
    # stay short (a worker's signature batch is computed before its transaction opens; writing
    # SIGN_BATCH_SIZE = 500 documents' rows takes 0.6-0.8 s on a 2-core machine, an ingest batch
    # of 500 about 0.2 s) and the timeout must outlast the longest of them with several queued
    # (tests/searchapp/test_concurrent_writers.py). The exception is a staff upload, imported
    # all or nothing in one transaction (about 6 s for Reuters' 19k documents): an upload near
    # the size limits can hold the lock longer than the timeout. Plain reads outside atomic()
    # (page views, search) take no write lock.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": SQLITE_TIMEOUT,
            "transaction_mode": "IMMEDIATE",
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                f"PRAGMA cache_size=-{SQLITE_CACHE_MB * 1024}; "
                f"PRAGMA mmap_size={SQLITE_MMAP_MB * 1024 * 1024}; "
                # Checkpoint the WAL every 64 MB rather than 4 MB: signing writes index pages all
                # over the file, and a page rewritten by many batches is then copied back once.
                "PRAGMA wal_autocheckpoint=16384;"
            ),
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Serve straight from static/ when collectstatic has not been run (tests, a quick DEBUG=0 try).
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))

# The site's login page: any active user can sign in there (the admin's login refuses non-staff,
# which locked ordinary users out when SEARCH_REQUIRE_LOGIN was on). django-axes guards both.
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Security headers that cost nothing on plain HTTP and matter behind TLS.
SESSION_COOKIE_HTTPONLY = True
# htmx sends the token from the hx-headers attribute on <body>, so no script needs the cookie.
CSRF_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# HSTS (sent over HTTPS only): browsers then refuse plain HTTP to this host for that long, so it
# is off on plain HTTP and a year once the site redirects to HTTPS. Set it yourself when TLS
# ends at a proxy that does the redirecting (SECURE_SSL_REDIRECT=0 there).
SECURE_HSTS_SECONDS = env_int(
    "SECURE_HSTS_SECONDS", 365 * 24 * 3600 if SECURE_SSL_REDIRECT else 0, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Extending HSTS to every subdomain, or asking browsers to preload it, binds hosts this app does
# not run: the domain owner opts in with the two variables above, so check --deploy's advice to
# turn them on (W005, W021) is silenced rather than followed by default.
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W021"]
# Everything the pages load is served by this site (htmx is vendored, the API docs come from
# django-ninja's static files); data: images are the API docs' icons. Empty: no header.
CONTENT_SECURITY_POLICY = env_str(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'",
)

# Login rate limiting (django-axes): lock an IP+username after N failures for a while.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = env_float("LOGIN_COOLOFF_HOURS", 0.25, minimum=0.0)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_ENABLED = env_bool("AXES_ENABLED", True)

# --- Celery --------------------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_FOLDER = Path(env_str("CELERY_BROKER_FOLDER", str(VAR_DIR / "broker")))
# How often a worker looks for new tasks in the filesystem broker's folder (seconds).
CELERY_BROKER_POLLING_INTERVAL = env_float("CELERY_BROKER_POLLING_INTERVAL", 0.1, minimum=0.01)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_WORKER_CONCURRENCY = env_int("CELERY_WORKER_CONCURRENCY", 1, minimum=1)
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 300, minimum=5)
# Queue the app publishes to and workers consume (tests use a private one per run).
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
# Publishing gives up after this many seconds when the broker is unreachable (ingest must not hang).
CELERY_BROKER_CONNECT_TIMEOUT = env_float("CELERY_BROKER_CONNECT_TIMEOUT", 2.0, minimum=0.1)
# Signature pipeline (searchapp/services/signatures/rebuild.py): chunk retries with exponential
# backoff.
SIGNATURE_CHUNK_MAX_RETRIES = env_int("SIGNATURE_CHUNK_MAX_RETRIES", 3, minimum=0)
SIGNATURE_RETRY_BACKOFF = env_int("SIGNATURE_RETRY_BACKOFF", 2, minimum=1)
SIGNATURE_RETRY_BACKOFF_MAX = env_int("SIGNATURE_RETRY_BACKOFF_MAX", 120, minimum=1)
# Periodic catch-up of pending documents by celery beat (0 disables the schedule).
SIGNATURE_CATCHUP_SECONDS = env_int("SIGNATURE_CATCHUP_SECONDS", 60, minimum=0)
# The niceness of Celery's worker processes and of manage.py ingest (searchapp.background): 0-19,
# 0 leaves them at the web's priority. Measured in bench/load/README.md (search capacity
# during an ingest and rebuilds).
BACKGROUND_NICE = env_int("BACKGROUND_NICE", 19, minimum=0, maximum=19)
# A running background job that shows no progress for this long is taken for one whose worker
# died or whose queued messages the broker lost: the periodic catch-up re-publishes a rebuild's
# unfinished chunks and ends a clusters recompute FAILED (queueing a new one).
JOB_STALL_SECONDS = env_int("JOB_STALL_SECONDS", 600, minimum=30)
if (
    DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    and SQLITE_BACKGROUND_TIMEOUT >= JOB_STALL_SECONDS
):
    # A worker still waiting for the write lock would be taken for a lost one.
    raise ImproperlyConfigured(
        f"SQLITE_BACKGROUND_TIMEOUT={SQLITE_BACKGROUND_TIMEOUT} must be below "
        f"JOB_STALL_SECONDS={JOB_STALL_SECONDS}"
    )
# Corpus-wide clusters are recomputed this many seconds after the last change (debounce).
CLUSTERS_DEBOUNCE_SECONDS = env_int("CLUSTERS_DEBOUNCE_SECONDS", 5, minimum=0)
# `manage.py recompute_clusters` runs on this Spark master (local[2], spark://host:7077) when
# set and no --spark is given; empty: on this machine. Needs the `spark` extra and Java 17.
SPARK_MASTER_URL = env_str("SPARK_MASTER_URL", "")
# Where a Spark recompute writes its export and output (every Spark worker must see it: a
# shared file system on a cluster of several machines); removed after each run.
SPARK_WORK_DIR = Path(env_str("SPARK_WORK_DIR", str(VAR_DIR / "spark")))
# Partial copies (services.partial_copies.jobs): a pair is kept when one document holds at
# least this share of the other's word 5-shingles, or they share a passage of at least this
# many words (every such passage is found: the winnowing window is words - 4).
PARTIAL_COPY_MIN_SHARE = env_float("PARTIAL_COPY_MIN_SHARE", 0.5, minimum=0.05, maximum=1.0)
PARTIAL_COPY_MIN_WORDS = env_int("PARTIAL_COPY_MIN_WORDS", 50, minimum=10, maximum=10_000)
# Threads deciding the candidate pairs of a large partial-copies update
# (services.partial_copies.bulk).
PARTIAL_COPY_THREADS = env_int("PARTIAL_COPY_THREADS", 2, minimum=1, maximum=32)
# For tests only: fault hooks read from the environment because the tests set them in a real
# worker process's environment (tests/searchapp/test_worker_faults.py), where no test code runs.
SIGNATURE_CHUNK_DELAY_MS = env_int("SIGNATURE_CHUNK_DELAY_MS", 0, minimum=0)
SIGNATURE_TEST_FAIL_CHUNK = env_int("SIGNATURE_TEST_FAIL_CHUNK", -1, minimum=-1)
SIGNATURE_TEST_FAIL_ATTEMPTS = env_int("SIGNATURE_TEST_FAIL_ATTEMPTS", 1000, minimum=0)
# Test-only: a pause per band of a clusters recompute, so a test can kill its worker mid-run.
CLUSTERS_TEST_BAND_DELAY_MS = env_int("CLUSTERS_TEST_BAND_DELAY_MS", 0, minimum=0)

# --- Search and dedup defaults ---------------------------------------------------------------
SEARCH_RESULT_LIMIT = env_int(
    "SEARCH_RESULT_LIMIT", 100, minimum=grouping_params.LIMIT_MIN, maximum=grouping_params.LIMIT_MAX
)
SEARCH_GROUPS_PER_PAGE = env_int(
    "SEARCH_GROUPS_PER_PAGE", 10, minimum=1, maximum=grouping_params.PER_PAGE_MAX
)
SEARCH_REQUIRE_LOGIN = env_bool("SEARCH_REQUIRE_LOGIN", False)
# The search page's topic facet (searchapp/topics/clustering.py): on or off, and how many topics at
# most.
SEARCH_TOPICS = env_bool("SEARCH_TOPICS", True)
SEARCH_MAX_TOPICS = env_int(
    "SEARCH_MAX_TOPICS",
    grouping_params.DEFAULT_TOPICS,
    minimum=grouping_params.TOPICS_MIN,
    maximum=grouping_params.TOPICS_MAX,
)
# Searches whose topics are anchored (searchapp/topics/memory.py): a search's first topics are
# kept in the database, and its later lists (a few documents added or gone, another folding
# threshold) keep them, the changed results placed in the topics they fit. The most recently
# anchored this many searches are kept; 0 clusters every list afresh.
SEARCH_TOPIC_ANCHORS = env_int("SEARCH_TOPIC_ANCHORS", 10_000, minimum=0, maximum=10_000_000)
# What each web process remembers of the searches it served (searchapp/memo/): ranked lists,
# folds, topics, maps, each kind its most recently used this many entries. 0 keeps nothing
# (every search computed afresh).
SEARCH_MEMO_ENTRIES = env_int("SEARCH_MEMO_ENTRIES", 256, minimum=0, maximum=100_000)
# How far behind other processes' writes a search may be, in seconds (searchapp/memo/view.py):
# a process keeps its view of the index and the database, and what it computed under it, for
# at most this long while others write (a process's own writes are seen at once), as an
# Elasticsearch index refreshes. 0: every search reads the latest commit (under a load, every
# search is then computed afresh).
SEARCH_REFRESH_SECONDS = env_float("SEARCH_REFRESH_SECONDS", 3.0, minimum=0.0, maximum=5.0)
# A Redis URL (redis://, rediss:// or unix://) where the web processes share the ranked lists
# they read and the topics they cluster (searchapp/memo/): a query read by one process
# is not scored again by the others. Empty: each process keeps its own only.
SEARCH_SHARED_CACHE_URL = env_str("SEARCH_SHARED_CACHE_URL", "").strip()
if SEARCH_SHARED_CACHE_URL and urlsplit(SEARCH_SHARED_CACHE_URL).scheme not in (
    "redis",
    "rediss",
    "unix",
):
    raise ImproperlyConfigured(
        f"SEARCH_SHARED_CACHE_URL={SEARCH_SHARED_CACHE_URL!r} is not a Redis URL "
        "(redis://host:port/db, rediss://... or unix:///path/to/socket)"
    )
DEDUP_DEFAULT_METHOD = env_choice("DEDUP_DEFAULT_METHOD", "minhash", grouping_params.METHODS)
# The same range every form, the API and the staff settings accept (searchapp/grouping_params.py).
DEDUP_DEFAULT_THRESHOLD = env_float(
    "DEDUP_DEFAULT_THRESHOLD",
    grouping_params.DEFAULT_THRESHOLD,
    minimum=grouping_params.THRESHOLD_MIN,
    maximum=grouping_params.THRESHOLD_MAX,
)
SIGNATURE_CHUNK_SIZE = env_int("SIGNATURE_CHUNK_SIZE", 2000, minimum=10)
# The full-text index (tantivy) of this server: derived from the database, rebuilt from it by
# `manage.py reindex`. One directory per database; keep it on a local disk.
SEARCH_INDEX_DIR = Path(env_str("SEARCH_INDEX_DIR", str(VAR_DIR / "search-index")))
# Which full-text engine searches: tantivy (the embedded default, SEARCH_INDEX_DIR) or
# Xapian (searchapp/search/xapian/): one local database under SEARCH_INDEX_DIR, or, with
# SEARCH_XAPIAN_SHARDS, a cluster of xapian-tcpsrv servers read as one database
# (docs/distributed-search.md).
SEARCH_BACKEND = env_choice("SEARCH_BACKEND", "tantivy", ("tantivy", "xapian"))
SEARCH_XAPIAN_SHARDS = env_shards("SEARCH_XAPIAN_SHARDS")
# A shard server that has not answered within this many seconds is taken as down (the search
# moves to another replica); one found down is not asked again for SEARCH_XAPIAN_RETRY_SECONDS.
SEARCH_XAPIAN_TIMEOUT = env_float("SEARCH_XAPIAN_TIMEOUT", 1.0, minimum=0.05, maximum=60.0)
SEARCH_XAPIAN_RETRY_SECONDS = env_float(
    "SEARCH_XAPIAN_RETRY_SECONDS", 10.0, minimum=0.0, maximum=3600.0
)
# Who applies the index's pending changes (searchapp.search.sync): the writers, once their
# transaction commits, at most SEARCH_WRITER_APPLY_DOCUMENTS document ids of changed ranges
# each time (the periodic catch-up applies the rest). Searches apply nothing: measured, searches
# that wrote served fewer requests and made edits searchable later (the writers' apply won).
# 0: the web processes never write the index (the periodic catch-up applies everything).
SEARCH_WRITER_APPLY_DOCUMENTS = env_int("SEARCH_WRITER_APPLY_DOCUMENTS", 5000, minimum=0)
# Records per ingest transaction; each batch then queues one worker task (its clusters, and
# its signing when not signed inline: services.ingest.batch.sign_inline, PostgreSQL's way).
# 2,000 keeps per-task costs small at a million documents.
INGEST_BATCH_SIZE = env_int("INGEST_BATCH_SIZE", 2000, minimum=1)
# The longest JSON line, CSV row or .txt/.md/.html file read; longer ones are skipped as bad
# records without being read whole, so ingest memory does not grow with the input.
INGEST_MAX_RECORD_BYTES = env_int("INGEST_MAX_RECORD_BYTES", 16 * 1024 * 1024, minimum=1024)
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 50 * 1024 * 1024, minimum=1024)
UPLOAD_MAX_UNCOMPRESSED_BYTES = env_int(
    "UPLOAD_MAX_UNCOMPRESSED_BYTES", 500 * 1024 * 1024, minimum=1024
)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}
