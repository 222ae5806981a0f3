"""The recorded real-cluster behaviour (../shared/conformance) checked against `kubeloop apiserver`.

Starts the emulator as a subprocess with TLS and a token, exactly as a user would, and runs the
conformance checker in --check mode; any failing scenario fails the test. `expected.json` was
recorded from kube-apiserver alone, so it is checked against `--bare`; `expected-cluster.json` from
kube-apiserver with kube-controller-manager, so it is checked against the default (cluster) mode;
`expected-fuzz.json` (seeded differential fuzz, kube-apiserver alone) against `--bare`, with its soft
differences (managedFields' fieldsV1 detail, message texts) reported but not failing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# KUBELOOP_CONFORMANCE_DIR: the checker elsewhere (e.g. from a git worktree that is not beside ../shared)
CANDIDATES = [Path(p) for p in [os.environ.get("KUBELOOP_CONFORMANCE_DIR", "")] if p] + [
    REPO.parent / "shared" / "conformance", REPO / "shared" / "conformance"]
CONFORMANCE = next((p for p in CANDIDATES if (p / "k8s_conformance.py").exists()), None)

pytestmark = [
    pytest.mark.skipif(CONFORMANCE is None, reason="conformance checker not found (expected ../shared/conformance "
                       "beside the repository)"),
    pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")), reason="checks the emulator only"),
]


@dataclass
class _Run:
    """One emulator process and the checker running against it."""

    server: subprocess.Popen[str]
    checker: subprocess.Popen[str] | None = None
    problem: str = ""

    def result(self, timeout: float) -> tuple[int, str]:
        if self.checker is None:
            return 1, self.problem
        out, err = self.checker.communicate(timeout=timeout)
        return self.checker.returncode, out + err

    def stop(self) -> None:
        for proc in (self.checker, self.server):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)


def _start(expected: str, *server_args: str, checker_args: tuple[str, ...] = (), strict: bool = True) -> _Run:
    assert CONFORMANCE is not None
    token = "conformance-token"
    run = _Run(subprocess.Popen(
        [sys.executable, "-c", "from kubeloop.cli.main import main; main()", "apiserver", "--tls", "--token", token,
         *server_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    assert run.server.stdout is not None
    url = run.server.stdout.readline().strip()
    if not url.startswith("https://"):
        run.problem = f"server did not start: {url!r} {run.server.stderr.read() if run.server.stderr else ''}"
        return run
    run.checker = subprocess.Popen(
        [sys.executable, str(CONFORMANCE / "k8s_conformance.py"), "--server", url, "--token", token,
         "--insecure", *(["--strict"] if strict else []), "--check", str(CONFORMANCE / expected), *checker_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return run


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, _Run]]:
    """The three checks run side by side (most of their time is the checker waiting for settled state)."""
    started = {
        "core": _start("expected.json", "--bare"),
        # a controller that never reacts fails within --settle-timeout instead of the checker's 120 s
        "cluster": _start("expected-cluster.json", checker_args=("--settle-timeout", "20")),
        # soft differences (managedFields' fieldsV1 detail, message texts) are reported, not failed
        "fuzz": _start("expected-fuzz.json", "--bare", strict=False),
    }
    yield started
    for run in started.values():
        run.stop()


def _check(run: _Run) -> None:
    code, output = run.result(timeout=160)
    failed = [line for line in output.splitlines() if line.startswith("FAIL")]
    assert code == 0 and not failed, "\n" + output[-20000:]


@pytest.mark.timeout(170)
def test_bare_apiserver_matches_kube_apiserver(runs: dict[str, _Run]) -> None:
    _check(runs["core"])


@pytest.mark.timeout(170)
def test_cluster_mode_matches_kube_apiserver_with_controller_manager(runs: dict[str, _Run]) -> None:
    _check(runs["cluster"])


@pytest.mark.timeout(170)
def test_bare_apiserver_matches_the_recorded_differential_fuzz(runs: dict[str, _Run]) -> None:
    _check(runs["fuzz"])
