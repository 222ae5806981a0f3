"""`kubeloop apiserver` from a plain `pip install kubeloop` (without the `testing` extra)."""

from __future__ import annotations

import subprocess
import sys


def test_apiserver_without_the_testing_extra_says_what_to_install() -> None:
    # `sys.modules[name] = None` is how a missing package looks to the import system
    run = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['cryptography'] = None; "
         "from kubeloop.cli.main import main; main()", "apiserver"],
        capture_output=True, text=True, timeout=30)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "Error: the API server emulator needs cryptography: pip install 'kubeloop[testing]'"]
