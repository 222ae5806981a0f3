# Two entry points, both self-contained on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-bare test-watchlist test-peers test-soak lint venv clean bench

$(BIN)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,testing,resources]'
	touch $@

venv: $(BIN)/.installed

demo: venv
	$(BIN)/kubeloop demo

lint: venv
	$(BIN)/ruff check kubeloop tests examples benchmarks
	$(BIN)/mypy

# Test files run on two workers per core (pytest-xdist, a file per worker): most tests wait on
# HTTP, timers and leases rather than compute, so on two cores 4 workers finish the suite in 89 s
# where 2 take 122 s (6: 93 s).
WORKERS := $(shell python3 -c 'import os; print(2 * len(os.sched_getaffinity(0)))' 2>/dev/null || echo 4)
PYTEST := $(BIN)/pytest -n $(WORKERS) --dist loadfile

test: lint
	$(PYTEST)

# The same suite against the API server alone (`--bare`, as envtest), instead of the default
# cluster mode (apiserver + the controller-manager's behaviour): it must pass in both.
test-bare: venv
	KUBELOOP_TEST_EMULATOR=bare $(PYTEST)

# The emulator is Kubernetes 1.24 unless told otherwise; the suite again with the streaming lists of
# later versions switched on (the WatchList feature gate), so every path that can stream (informers
# with `streaming_list`, the client's `send_initial_events`) is tested both ways: refused and
# listed instead, as on a 1.24 cluster, and streamed.
test-watchlist: venv
	KUBELOOP_TEST_FEATURE_GATES=WatchList=true $(PYTEST)

# The peer benchmark smoke test (kubeloop vs kopf vs bare; installs kopf from PyPI on first run).
# `-m peers` on the command line overrides the default `-m 'not peers'` from pyproject's addopts.
test-peers: venv
	$(BIN)/pytest -m peers tests/benchmarks

# the soak tests (minutes; KUBELOOP_SOAK_SECONDS sets how long): memory and tasks stay flat
test-soak: venv
	$(BIN)/pytest -m soak -s -o timeout=900 examples tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
