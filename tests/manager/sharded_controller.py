"""A controller for the sharding process tests (run by `kubeloop run --sharding`): each reconcile
of a ConfigMap labelled ``shard-test=yes`` logs its start and end with the system-wide monotonic
clock and the ``data.v`` it saw, and works for 20 ms (2 s when ``v`` is ``slow``; ``tick`` asks to
run again in 3 s), so a test can check that no two replicas ever reconciled one key at the same
time."""

from __future__ import annotations

import asyncio
import logging
import time

from kubeloop import Context, Controller, Manager, Request, Result

log = logging.getLogger("shardtest")


async def reconcile(req: Request, ctx: Context) -> Result | None:
    cm = ctx.get()
    v = (cm.get("data") or {}).get("v", "-") if cm is not None else "gone"
    log.info("RECONCILE start %s/%s %s %.6f", req.namespace, req.name, v, time.monotonic())
    await asyncio.sleep(2.0 if v == "slow" else 0.02)
    log.info("RECONCILE end %s/%s %s %.6f", req.namespace, req.name, v, time.monotonic())
    return Result(requeue_after=3.0) if v == "tick" else None


def setup(manager: Manager) -> None:
    manager.add(Controller("sharded", for_="v1/ConfigMap", label_selector={"shard-test": "yes"},
                           namespace=manager.namespace, reconcile=reconcile, max_concurrent_reconciles=4))
