"""The seeded differential fuzz (../shared/conformance, family `fuzz`) checked against `kubeloop apiserver`.

`expected-fuzz.json` holds what a real kube-apiserver 1.24 answered to random sequences of valid
and invalid operations (fuzz_s1..s25). The emulator runs as a subprocess, exactly as a user would
start it, and the checker must find no differing step.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = [REPO.parent / "shared" / "conformance", REPO / "shared" / "conformance"]
CONFORMANCE = next((p for p in CANDIDATES if (p / "k8s_conformance.py").exists()), None)


@pytest.mark.skipif(CONFORMANCE is None or not (CONFORMANCE / "expected-fuzz.json").exists(),
                    reason="conformance checker not found (expected ../shared/conformance beside the repository)")
@pytest.mark.skipif(bool(os.environ.get("KUBELOOP_TEST_KUBECONFIG")), reason="checks the emulator only")
@pytest.mark.timeout(300)
def test_fuzz_conformance_against_kubeloop_apiserver() -> None:
    assert CONFORMANCE is not None
    server = subprocess.Popen(
        [sys.executable, "-c", "from kubeloop.cli.main import main; main()", "apiserver"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://"), f"server did not start: {url!r} {server.stderr.read() if server.stderr else ''}"
        result = subprocess.run(
            [sys.executable, str(CONFORMANCE / "k8s_conformance.py"), "--server", url, "--check",
             str(CONFORMANCE / "expected-fuzz.json"), "-v"],
            capture_output=True, text=True, timeout=280)
        failed = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
        assert result.returncode == 0 and not failed, "\n" + result.stdout[-20000:] + result.stderr[-5000:]
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
