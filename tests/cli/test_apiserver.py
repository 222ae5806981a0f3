"""`kubeloop apiserver` as a process: it stops promptly on SIGTERM, and without the `testing` extra it
says what to install."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp

KUBELOOP = str(Path(sys.executable).with_name("kubeloop"))


async def test_sigterm_stops_the_apiserver_promptly_with_open_watches_and_slow_requests() -> None:
    """Issue 11 item 14: open watches and an in-flight (delayed) request do not hold the exit up."""
    proc = await asyncio.create_subprocess_exec(KUBELOOP, "apiserver", stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        url = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        async with aiohttp.ClientSession() as session:
            watches = [asyncio.create_task(session.get(f"{url}/api/v1/configmaps?watch=1&timeoutSeconds=300"))
                       for _ in range(5)]
            async with session.post(f"{url}/_kubeloop/delay?seconds=60") as r:
                assert r.status == 200
            slow = asyncio.create_task(session.get(f"{url}/api/v1/namespaces/default/configmaps"))
            await asyncio.sleep(0.3)
            loop = asyncio.get_running_loop()
            started = loop.time()
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 10)
            elapsed = loop.time() - started
            for task in (*watches, slow):
                task.cancel()
            await asyncio.gather(*watches, slow, return_exceptions=True)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert code == 0
    assert elapsed < 3.0, elapsed


def test_apiserver_without_the_testing_extra_says_what_to_install() -> None:
    # `sys.modules[name] = None` is how a missing package looks to the import system
    run = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['cryptography'] = None; "
         "from kubeloop.cli.main import main; main()", "apiserver"],
        capture_output=True, text=True, timeout=30)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "Error: the API server emulator needs cryptography: pip install 'kubeloop[testing]'"]
