# Every target works on a fresh clone: it creates .venv and installs into it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: the demo needs only the runtime; the tests need the dev tools too.
# Either one is redone when pyproject.toml changes, so `make demo` then `make test` upgrades.
RUNTIME_STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: install install-dev demo test lint typecheck docs bench-real bench-index bench-load bench-scale screenshot clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==26.3

$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(RUNTIME_STAMP)

install-dev: $(DEV_STAMP)

# The web demo on the embedded synthetic catalog (generated and indexed on first use).
demo: $(RUNTIME_STAMP)
	$(BIN)/shopcopilot serve $(if $(CI),--no-browser,)

# What CI runs: the checks first (fast), then the suite.
test: lint typecheck browser-deps redis-deps
	$(BIN)/python -m pytest

lint: $(DEV_STAMP)
	$(BIN)/ruff check shopcopilot tests benchmarks
	$(BIN)/ruff format --check shopcopilot tests benchmarks

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# The docs as a static site in site/ (MkDocs, offline: no CDN). tests/test_docs.py builds it too.
docs: $(DEV_STAMP)
	$(BIN)/mkdocs build --strict

# The 200 public sessions on the real records padded to 50,000 products, both protocols.
bench-real: $(DEV_STAMP)
	$(BIN)/shopcopilot bench-real --agent $(or $(AGENT),shopcopilot.agent:Agent) -o $(or $(OUT),runs/bench-real)

bench-index: $(DEV_STAMP)
	$(BIN)/python benchmarks/index_bench.py

# 200 shoppers x 5 turns against `serve --workers 2` with a Redis store (docs/benchmarks.md).
bench-load: $(DEV_STAMP) redis-deps
	$(BIN)/python benchmarks/load.py

# 50k and 1M products, the benchmark's settings and the people's (meaning through the graph
# index past the scan's size): build, memory, disk, latency and quality, into docs/scaling.md.
# Generates the 1M catalog on first use (about 8 minutes) and builds its index (minutes).
bench-scale: $(DEV_STAMP)
	nice -n 10 $(BIN)/python benchmarks/scale.py --sessions 100 --docs

# docs/screenshot.png from the running page: a short conversation on the embedded catalog in
# Debian's Chromium (not run by CI).
screenshot: $(DEV_STAMP) browser-deps
	$(BIN)/python benchmarks/screenshot.py

clean:
	rm -rf $(VENV) runs .pytest_cache site

# Debian's Chromium for tests/test_web_browser.py (Playwright drives it; never `playwright install`).
# Installs only when missing and we are root; never prompts. Without it the browser tests skip.
.PHONY: browser-deps
browser-deps:
	@if [ -x /usr/bin/chromium ]; then \
		echo "browser-deps: /usr/bin/chromium present"; \
	elif [ "$$(id -u)" = 0 ]; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -q chromium chromium-driver \
			|| { apt-get update -q && apt-get install -y -q chromium chromium-driver; } \
			|| echo "browser-deps: could not install chromium: browser tests will be skipped"; \
	else \
		echo "browser-deps: /usr/bin/chromium missing and not root: browser tests will be skipped"; \
	fi

# Debian's redis-server for the Redis session-store tests (they start their own on a free port).
# Installs only when missing and we are root; never prompts. Without it those tests skip.
.PHONY: redis-deps
redis-deps:
	@if command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ]; then \
		echo "redis-deps: redis-server present"; \
	elif [ "$$(id -u)" = 0 ]; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -q redis-server \
			|| { apt-get update -q && apt-get install -y -q redis-server; } \
			|| echo "redis-deps: could not install redis-server: Redis tests will be skipped"; \
	else \
		echo "redis-deps: redis-server missing and not root: Redis tests will be skipped"; \
	fi
