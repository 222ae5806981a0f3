"""CI smoke test of the peer benchmarks: ``python -m benchmarks.peers --quick`` runs every scenario
for every framework (kopf installed from PyPI into its own venv on first run) and writes its
outputs. It fails if a scenario errors or produces nothing, never on timings; if PyPI cannot be
reached the kopf install fails and so does this test, loudly (no skip). It carries the ``peers``
marker: ``make test`` deselects it (it is about half of the suite's time), ``make test-peers`` runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


pytestmark = pytest.mark.peers  # deselected by default (pyproject addopts); `make test-peers` runs it


@pytest.mark.timeout(300)
def test_quick_mode_runs_every_scenario(tmp_path: Path) -> None:
    out = tmp_path / "peers.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks.peers", "--quick", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, f"the quick benchmark failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    result = json.loads(out.read_text())
    assert result["versions"]["kopf"], "kopf's version is recorded"
    for pkg in ("python", "kubeloop", "aiohttp", "orjson"):
        assert result["versions"][pkg]
    frameworks = {"kubeloop", "kopf", "bare"}
    warm = result["warmup"]
    assert {(r["framework"], r["kind"]) for r in warm} == {(f, k) for f in frameworks for k in ("configmaps", "pods")}
    assert all(r["seconds"] > 0 and r["bytes_per_object"] is not None for r in warm)
    churn = {r["framework"]: r for r in result["churn"]}
    assert set(churn) == frameworks
    for fw, r in churn.items():
        assert r["write_errors"] == 0, fw
        assert r["handler_calls"] > 0 and r["lag_p99_ms"] is not None, f"{fw} saw no change"
    assert {r["framework"] for r in result["multi"]} == {"kubeloop", "kopf"}
    assert all(r["open_watches"] >= 1 for r in result["multi"])
    storm = {r["framework"]: r for r in result["storm"]}
    assert set(storm) == {"kubeloop", "kopf"}
    assert result["ratios"], "the targets table is filled"
    md = out.with_suffix(".md").read_text()
    assert "## 1. Cache warm-up" in md and "## 4. Reconcile storm" in md
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
