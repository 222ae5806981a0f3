"""`kubeloop apiserver` as a process: it serves, and it stops promptly on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
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
