"""The probe endpoints' answers (real HTTP to a `ProbeServer` on a free port)."""

from __future__ import annotations

import aiohttp

from kubeloop.manager._probes import ProbeServer


async def test_a_failing_healthz_says_unhealthy_not_not_ready() -> None:
    """Issue 11 item 14: a liveness failure must not read as a readiness one."""
    server = ProbeServer(health_port=0, metrics_port=None, host="127.0.0.1",
                         readiness=lambda: ["informer v1/ConfigMap: Listing"],
                         liveness=lambda: ["event loop blocked for 12.0s"])
    await server.start()
    try:
        assert server.health_url is not None
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{server.health_url}/healthz") as r:
                health = (r.status, await r.text())
            async with session.get(f"{server.health_url}/readyz") as r:
                ready = (r.status, await r.text())
    finally:
        await server.stop()
    assert health == (503, "unhealthy:\n- event loop blocked for 12.0s\n")
    assert ready == (503, "not ready:\n- informer v1/ConfigMap: Listing\n")
