"""`kubeloop demo`: the controller demo runs green, shows each step, and fails when a step fails."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import kubeloop.cli.demo as demo
from kubeloop.cli.demo import run_demo
from kubeloop.controller import Controller


async def test_demo_runs_green_and_shows_the_controller_at_work(capsys: Any) -> None:
    assert await run_demo() == 0
    out = capsys.readouterr().out
    for expected in (
        "reconcile demo/shop",
        "+ ConfigMap demo/shop-content created",
        "+ Deployment demo/shop created (replicas 2)",
        "status written: replicas=2 configMap=shop-content observedGeneration=1",
        "~ Deployment demo/shop updated (replicas 3)",
        "- ConfigMap demo/shop-content deleted",
        "+ ConfigMap demo/shop-content created (repaired)",
        "0 writes to the API server",
        "- Deployment demo/shop deleted",
        "demo finished: OK",
    ):
        assert expected in out, f"{expected!r} missing from:\n{out}"
    m = re.search(r'controller_runtime_reconcile_total\{controller="webapp",result="success"\} (\d+)', out)
    assert m and int(m.group(1)) >= 8, out


async def test_demo_fails_when_the_controller_misbehaves(capsys: Any, monkeypatch: Any) -> None:
    real = demo.load_example()

    class Broken:
        """The example, but its controller never writes the status."""

        WebApp = real.WebApp

        @staticmethod
        def make_controller() -> Any:
            c = real.make_controller()

            async def no_status(req: Any, ctx: Any) -> None:
                app = ctx.get(real.WebApp)
                if app is not None:
                    cm, dep = real.children(app)
                    await ctx.apply(cm, owner=app)
                    await ctx.apply(dep, owner=app)

            return Controller.from_spec(dataclasses.replace(c.spec, reconcile=no_status))

    monkeypatch.setattr(demo, "load_example", lambda: Broken)
    monkeypatch.setattr(demo, "STEP_TIMEOUT", 1.0)
    assert await run_demo() == 1
    out = capsys.readouterr().out
    assert "FAILED: children created and status written: not seen within 1s" in out
    assert "demo finished: FAILED" in out


def test_a_missing_extra_names_itself(tmp_path: Any) -> None:
    """Installed with the `testing` extra alone, the demo's typed example cannot import pydantic: the
    demo says which extra to install instead of a bare ModuleNotFoundError."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    hidden = tmp_path / "hide"
    (hidden / "pydantic").mkdir(parents=True)
    (hidden / "pydantic" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pydantic'\", name='pydantic')\n")
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hidden), str(repo)]))
    done = subprocess.run([sys.executable, "-m", "kubeloop", "demo"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "needs pydantic, from the 'resources' extra: pip install 'kubeloop[testing,resources]'" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
