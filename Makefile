# Two entry points, both self-contained on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint venv clean bench

$(BIN)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,testing]'
	touch $@

venv: $(BIN)/.installed

demo: venv
	$(BIN)/kubeloop demo

lint: venv
	$(BIN)/ruff check kubeloop tests examples benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
