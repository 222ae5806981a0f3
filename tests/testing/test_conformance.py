"""The recorded real-cluster behaviour (../shared/conformance) checked against `kubeloop apiserver`.

Starts the emulator as a subprocess with TLS and a token, exactly as a user would, and runs the
conformance checker in --check mode; any failing scenario fails the test. `expected.json` was
recorded from kube-apiserver alone, so it is checked against `--bare`; `expected-cluster.json` from
kube-apiserver with kube-controller-manager, so it is checked against the default (cluster) mode.
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def _check(expected: str, *server_args: str, checker_args: tuple[str, ...] = (), timeout: float = 160) -> None:
    assert CONFORMANCE is not None
    token = "conformance-token"
    server = subprocess.Popen(
        [sys.executable, "-c", "from kubeloop.cli.main import main; main()", "apiserver", "--tls", "--token", token,
         *server_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("https://"), f"server did not start: {url!r} {server.stderr.read() if server.stderr else ''}"
        result = subprocess.run(
            [sys.executable, str(CONFORMANCE / "k8s_conformance.py"), "--server", url, "--token", token,
             "--insecure", "--strict", "--check", str(CONFORMANCE / expected), *checker_args],
            capture_output=True, text=True, timeout=timeout)
        failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
        assert result.returncode == 0 and not failed, "\n" + result.stdout + result.stderr
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.mark.timeout(170)
def test_bare_apiserver_matches_kube_apiserver() -> None:
    _check("expected.json", "--bare")


@pytest.mark.timeout(170)
def test_cluster_mode_matches_kube_apiserver_with_controller_manager() -> None:
    # a controller that never reacts fails within --settle-timeout instead of the checker's 120 s
    _check("expected-cluster.json", checker_args=("--settle-timeout", "20"))
