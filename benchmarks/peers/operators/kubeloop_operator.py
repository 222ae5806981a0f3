"""The kubeloop side of the peer benchmarks (one subprocess per run, settings from PEERS_* variables):

    python -m benchmarks.peers.operators.kubeloop_operator

Modes (see kopf_operator.py for kopf's equivalents):
  warmup  a shared-cache informer with an index by a label value; reports when synced and indexed.
  idle    the same against an empty namespace (memory baseline).
  churn   a Controller with a trivial reconcile computing the lag from the writer's timestamp.
  multi   PEERS_CONTROLLERS Controllers on the same kind, in one process and one shared cache.
  storm   a parent ConfigMap controller owning a child Secret, written with ``ctx.apply``
          (server-side apply that skips no-op writes), re-reconciled every PEERS_RESYNC s.

Everything runs in a `Manager` (no leader election, no probe ports), as an operator would.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Mapping
from typing import Any

from benchmarks.peers.operators import report as _report
from benchmarks.peers.operators.report import LABEL, STAMP, Settings, mark_start, report
from kubeloop.client import Client
from kubeloop.controller import Context, Controller, Request, Result
from kubeloop.manager import Manager


def cache_options() -> dict[str, Any]:
    """The cache's codec: the default (compact zstd) unless PEERS_CODEC names another."""
    codec = os.environ.get("PEERS_CODEC")
    return {"codec": codec} if codec else {}


def by_group(obj: Mapping[str, Any]) -> str | None:
    labels = obj["metadata"].get("labels") or {}
    value = labels.get(LABEL)
    return str(value) if value is not None else None


async def warmup(s: Settings, client: Client, stop: asyncio.Event) -> None:
    manager = Manager(client, cache_options=cache_options())
    objects = manager.informer(f"v1/{s.kind}", namespace=s.namespace, indexes={"group": by_group})
    async with manager:
        await objects.wait_synced(timeout=600)
        store = objects.handle().informer.store  # counted by keys: no object is decoded for the count
        held = sum(len(store.index_keys("group", g)) for g in store.index_values("group"))
        report(s.report, "ready", held=held)
        await stop.wait()


async def run_manager(manager: Manager, s: Settings, stop: asyncio.Event, ready: asyncio.Event | None = None,
                      **fields: Any) -> None:
    """Start, report "ready" once every controller is (and `ready` is set), run until `stop`."""
    async with manager:
        if not await manager.wait_ready(timeout=600):
            raise RuntimeError(f"the manager is not ready: {manager.readiness()}")
        if ready is not None:
            await ready.wait()
        report(s.report, "ready", **fields)
        await stop.wait()


async def churn(s: Settings, client: Client, stop: asyncio.Event) -> None:
    lags: list[float] = []
    calls = 0

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        nonlocal calls
        obj = ctx.get()
        if obj is not None:
            stamp = (obj["metadata"].get("annotations") or {}).get(STAMP)
            if stamp is not None and float(stamp) >= _report.T0:  # not a stamp left by an earlier run
                calls += 1
                lags.append(time.time() - float(stamp))
        return None

    manager = Manager(client, cache_options=cache_options())
    manager.add(Controller("churn", for_=f"v1/{s.kind}", namespace=s.namespace, reconcile=reconcile))
    await run_manager(manager, s, stop)
    report(s.report, "final", calls=calls, lags=lags)


async def multi(s: Settings, client: Client, stop: asyncio.Event) -> None:
    seen: list[set[str]] = [set() for _ in range(s.controllers)]
    done = asyncio.Event()

    def make(i: int) -> Controller:
        async def reconcile(req: Request, ctx: Context) -> Result | None:
            seen[i].add(req.name)
            if all(len(x) >= s.n for x in seen):
                done.set()
            return None
        return Controller(f"multi{i}", for_=f"v1/{s.kind}", namespace=s.namespace, reconcile=reconcile)

    manager = Manager(client, cache_options=cache_options())
    for i in range(s.controllers):
        manager.add(make(i))
    await run_manager(manager, s, stop, done, handlers=s.controllers)


async def storm(s: Settings, client: Client, stop: asyncio.Event) -> None:
    reconciles = 0

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        nonlocal reconciles
        reconciles += 1
        parent = ctx.get()
        if parent is None:
            return None
        child = {"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": f"{req.name}-child", "namespace": req.namespace,
                              "labels": {"peers/child": "1"}},
                 "stringData": {"size": str((parent.get("data") or {}).get("size", "1"))}}
        await ctx.apply(child, owner=parent)
        return Result(requeue_after=s.resync)

    manager = Manager(client, cache_options=cache_options())
    manager.add(Controller("storm", for_="v1/ConfigMap", namespace=s.namespace, label_selector="peers/role=parent",
                           reconcile=reconcile, max_concurrent_reconciles=4).owns("v1/Secret"))
    await run_manager(manager, s, stop)
    report(s.report, "final", reconciles=reconciles)


MODES = {"warmup": warmup, "idle": warmup, "churn": churn, "multi": multi, "storm": storm}


async def main() -> None:
    mark_start()
    s = Settings.from_env()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with await Client.from_kubeconfig(s.kubeconfig) as client:
        await MODES[s.mode](s, client, stop)


if __name__ == "__main__":
    asyncio.run(main())
