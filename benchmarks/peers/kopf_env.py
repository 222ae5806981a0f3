"""kopf's own virtual environment, created on first use with ``pip install kopf`` from PyPI
(nothing of kopf is vendored), and the versions it holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

VENV = Path(__file__).resolve().parent.parent / ".peers-venv"
REQUIREMENT = "kopf"


class KopfUnavailable(RuntimeError):
    """kopf could not be installed (PyPI unreachable?): the benchmark cannot compare, and says so."""


def ensure(venv: Path = VENV, requirement: str = REQUIREMENT) -> Path:
    """The `kopf` executable of `venv`, creating the venv and installing kopf if needed."""
    kopf = venv / "bin" / "kopf"
    if kopf.exists():
        return kopf
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", requirement],
                          capture_output=True, text=True)
    if done.returncode != 0 or not kopf.exists():
        raise KopfUnavailable(f"`pip install {requirement}` into {venv} failed (is PyPI reachable?):\n"
                              f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return kopf


def versions(venv: Path = VENV) -> dict[str, str]:
    """Versions of kopf, aiohttp and Python in kopf's venv."""
    code = ("import json, platform, importlib.metadata as m; "
            "print(json.dumps({'kopf': m.version('kopf'), 'aiohttp': m.version('aiohttp'), "
            "'python': platform.python_version()}))")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], check=True, capture_output=True, text=True)
    data: dict[str, str] = json.loads(out.stdout)
    return data
