"""Graceful shutdown and process death, end to end: `kubeloop run` in a subprocess against
`kubeloop apiserver` in another, signals sent for real."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

from kubeloop import Client, LeaderElection, Manager
from kubeloop.client import RetryPolicy
from kubeloop.config import load_kubeconfig
from kubeloop.manager._lease import LEASE, LeaseRecord

from .processes import emulator_process, free_port, start_run, wait_http_ok


def slow_cm(name: str, seconds: float) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "labels": {"slow": "yes"}},
            "data": {"seconds": str(seconds)}}


async def annotations(client: Client, names: list[str]) -> list[dict[str, str]]:
    return [(await client.get("v1/ConfigMap", n, namespace="default"))["metadata"].get("annotations") or {}
            for n in names]


async def wait_started(client: Client, names: list[str], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while True:
            if all(a.get("started") for a in await annotations(client, names)):
                return
            await asyncio.sleep(0.05)


async def test_sigterm_lets_in_flight_reconciles_finish_and_exits_0(tmp_path: Path) -> None:
    async with emulator_process(tmp_path) as api, \
            Client(load_kubeconfig(api.kubeconfig), retry=RetryPolicy(max_attempts=3, base_delay=0.01)) as client:
        port = free_port()
        proc = await start_run("tests/manager/slow_controller.py", "--kubeconfig", api.kubeconfig,
                               "--health-port", str(port), "--metrics-port", "0", "--bind-address", "127.0.0.1",
                               "--shutdown-timeout", "10", "--leader-election", "--leader-election-id", "slow",
                               "--lease-duration", "15")
        try:
            await wait_http_ok(f"http://127.0.0.1:{port}/readyz", proc)
            names = ["a", "b", "c"]
            for n in names:
                await client.create(slow_cm(n, 1.5))
            await wait_started(client, names)
            assert not any(a.get("finished") for a in await annotations(client, names))
            t0 = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 10)
            took = time.monotonic() - t0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode == 0, err.decode()[-2000:]
        assert took < 5, took
        assert all(a.get("finished") == "yes" for a in await annotations(client, names)), err.decode()[-2000:]
        log = err.decode()
        assert "received SIGTERM: shutting down gracefully" in log
        assert "released the lease" in log
        lease = LeaseRecord.from_lease(await client.get(LEASE, "slow", namespace="default"))
        assert lease.holder == "" and lease.duration == 1  # released: a standby may take over at once


async def test_second_signal_exits_at_once(tmp_path: Path) -> None:
    async with emulator_process(tmp_path) as api, \
            Client(load_kubeconfig(api.kubeconfig), retry=RetryPolicy(max_attempts=3, base_delay=0.01)) as client:
        port = free_port()
        proc = await start_run("tests/manager/slow_controller.py", "--kubeconfig", api.kubeconfig,
                               "--health-port", str(port), "--metrics-port", "0", "--bind-address", "127.0.0.1",
                               "--shutdown-timeout", "60")
        try:
            await wait_http_ok(f"http://127.0.0.1:{port}/readyz", proc)
            await client.create(slow_cm("long", 60))
            await wait_started(client, ["long"])
            proc.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.3)
            assert proc.returncode is None  # still draining the 60 s reconcile
            t0 = time.monotonic()
            proc.send_signal(signal.SIGINT)
            _, err = await asyncio.wait_for(proc.communicate(), 5)
            took = time.monotonic() - t0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode == 1 and took < 2
        assert "received SIGINT again: exiting now" in err.decode()


async def test_killed_leader_process_is_replaced_within_the_lease_duration(tmp_path: Path) -> None:
    async with emulator_process(tmp_path) as api, \
            Client(load_kubeconfig(api.kubeconfig), retry=RetryPolicy(max_attempts=3, base_delay=0.01)) as client:
        port = free_port()
        proc = await start_run("tests/manager/slow_controller.py", "--kubeconfig", api.kubeconfig,
                               "--health-port", str(port), "--metrics-port", "0", "--bind-address", "127.0.0.1",
                               "--leader-election", "--leader-election-id", "slow", "--lease-duration", "1",
                               "--renew-deadline", "0.7", "--retry-period", "0.2")
        standby = Manager(client, leader_election=LeaderElection("slow", identity="standby", lease_duration=1,
                                                                 renew_deadline=0.7, retry_period=0.2))
        try:
            await wait_http_ok(f"http://127.0.0.1:{port}/readyz", proc)
            async with standby:
                assert await standby.wait_ready(5) and not standby.is_leader
                t0 = time.monotonic()
                proc.kill()  # SIGKILL: no release
                await proc.wait()
                assert LeaseRecord.from_lease(await client.get(LEASE, "slow", namespace="default")).holder != ""
                assert await standby.wait_leader(3)
                took = time.monotonic() - t0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert 0.4 < took < 1.0 + 2 * 0.2 * 2.2 + 0.3, took
