"""The command line is reachable as `python -m kubeloop` and `python -m kubeloop.cli.main` too."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["kubeloop", "kubeloop.cli.main"])
def test_python_dash_m_runs_the_command_line(module: str) -> None:
    done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: kubeloop [OPTIONS] COMMAND [ARGS]...")
    assert all(cmd in done.stdout for cmd in ("apiserver", "demo", "manifests", "migrate", "run"))
    bad = subprocess.run([sys.executable, "-m", module, "no-such-command"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "No such command 'no-such-command'" in bad.stderr
