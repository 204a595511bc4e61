# Every target works on a fresh clone: it creates .venv and installs into it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test bench-real bench-index clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/shopcopilot demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench-real: $(STAMP)
	$(BIN)/shopcopilot bench-real --agent $(or $(AGENT),shopcopilot.bench.baseline:BaselineAgent) -o $(or $(OUT),runs/bench-real)

bench-index: $(STAMP)
	$(BIN)/python benchmarks/index_bench.py

clean:
	rm -rf $(VENV) runs .pytest_cache
