# The two commands a fresh machine needs: `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# The real services the integration tests use (CI and the developer machines run them).
TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/postgres
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-engine test-app test-postgres test-browser test-spark lint demo bench bench-engine bench-search bench-ranking bench-pipeline bench-scale bench-languages clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $@ $(VENV)/.installed

## make run: install, migrate the embedded SQLite database, load the demo corpus, sign it, serve.
run: export DEBUG ?= 1
run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py generate_demo_corpus --if-empty
	$(PY) manage.py reindex --pending
	$(PY) manage.py rebuild_signatures --method all --wait --if-missing
	HOST=$(HOST) PORT=$(PORT) bash bin/serve

## make test: the whole suite — engine, app on SQLite, app on PostgreSQL + Redis + a real worker, browser.
test: lint test-engine test-app test-postgres test-browser test-spark

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check config dedup searchapp tests bench
	$(BIN)/mypy

test-engine: $(VENV)/.installed-dev
	$(BIN)/pytest tests/dedup

test-app: $(VENV)/.installed-dev
	$(BIN)/pytest tests/searchapp -m "not services and not spark"

test-postgres: $(VENV)/.installed-dev
	DATABASE_URL=$(TEST_POSTGRES_URL) CELERY_BROKER_URL=$(TEST_REDIS_URL) $(BIN)/pytest tests/searchapp -m "not spark"

## test-spark: the Spark recompute against this machine's (local[2], and a standalone cluster).
test-spark: $(VENV)/.installed-dev
	$(BIN)/pytest tests/searchapp -m spark

test-browser: $(VENV)/.installed-dev
	$(BIN)/pytest tests/browser

## bench-pipeline: rebuild N docs with 1 then 2 workers on PostgreSQL + Redis (own database, dropped after).
bench-pipeline: $(VENV)/.installed-dev
	$(PY) bench/pipeline_scale.py --docs $${DOCS:-100000}

## bench-scale: generate, ingest, sign, cluster and search N docs (DB=sqlite|postgresql; see BENCHMARKS.md).
bench-scale: $(VENV)/.installed-dev
	$(PY) bench/scale.py --docs $${DOCS:-100000} --database $${DB:-sqlite}

bench-engine: $(VENV)/.installed-dev
	$(PY) bench/dedup_bench.py

## bench-languages: near-duplicates, known-item search and detection per language.
bench-languages: $(VENV)/.installed-dev
	$(PY) bench/languages.py

clean:
	rm -rf var staticfiles .pytest_cache .ruff_cache .mypy_cache
