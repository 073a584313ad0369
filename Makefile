# Two entry points that work on a fresh machine with only Python 3.11 and pip.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: compile demo test bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

# The set-up's second step: every kernel and engine loop compiled into the cache once, in
# parallel worker processes (seconds when the cache is up to date), so no run compiles.
compile: $(STAMP)
	$(BIN)/sat compile

demo: compile
	$(BIN)/sat reproduce --quick --out demo-output

test: compile
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -n 2 --dist loadscope --no-loadscope-reorder --durations=25 --doctest-modules src tests

bench: compile
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache
