# The two commands: `make demo` and `make test`. Each creates .venv and installs first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-long lint bench clean

CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[postgres,redis,dev,embeddings,metrics,server,mcp,langgraph]'
	$(BIN)/python -m scripts.fetch_tokenizer
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.case_review --dir demo-output

# The console's browser tests drive Debian's chromium; installed only when it is missing.
$(CHROMIUM):
	$(SUDO) apt-get update
	$(SUDO) apt-get install -y chromium

# Test files are spread over TEST_WORKERS processes (pytest-xdist), a file's tests kept
# together so its module fixtures (a served console, a browser) start once.
TEST_WORKERS ?= 2

test: $(STAMP) $(CHROMIUM)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=20

test-long: $(STAMP)
	$(BIN)/python -m pytest -q -m slow --run-slow

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[postgres,redis,dev,embeddings,metrics,server,mcp,langgraph,bench]'
	$(BIN)/python -m bench.steps
	$(BIN)/python -m bench.langgraph
	$(BIN)/python -m bench.embeddings
	$(BIN)/python -m bench.memory --no-postgres --ingest 1000
	$(BIN)/python -m bench.context
	$(BIN)/python -m bench.workers
	$(BIN)/python -m bench.cli_start

lint: $(STAMP)
	$(BIN)/ruff check src tests examples bench scripts
	$(BIN)/ruff format --check src tests examples bench scripts
	$(BIN)/mypy

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
