"""Soak: clusters engaged, replaced and removed for minutes while a controller runs on every
cluster; memory and tasks must stay flat.

Deselected by default (the ``soak`` marker); run with ``make test-soak`` or
``pytest -m soak tests/manager/test_engage_soak.py -s`` (``KUBELOOP_SOAK_SECONDS``, default 150). The
clusters are `kubeloop apiserver` child processes, so what is measured is this process alone. Each
cycle adds an edge cluster (a new client: the controller engages it and reconciles its ConfigMap),
replaces it with the other server (the sources reopen on the new client), then removes it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
import tracemalloc
from typing import Any

import pytest

from kubeloop import Client, Context, Controller, Manager, Request, Result
from kubeloop.config import load_kubeconfig
from kubeloop.testing import APIServerProcess, eventually

pytestmark = pytest.mark.soak

SECONDS = float(os.environ.get("KUBELOOP_SOAK_SECONDS", "150"))


def traced_bytes() -> int:
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, __file__),
                                                          tracemalloc.Filter(False, tracemalloc.__file__)])
    return sum(t.size for t in snapshot.traces)


async def test_memory_and_tasks_stay_flat_while_clusters_are_engaged_and_removed() -> None:
    seen: set[Request] = set()

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        seen.add(req)
        return None

    with APIServerProcess() as hub_server, APIServerProcess() as e0, APIServerProcess() as e1:
        edges = [load_kubeconfig(e0.kubeconfig), load_kubeconfig(e1.kubeconfig)]
        for i, config in enumerate(edges):
            async with Client(config, qps=None) as c:
                await c.create({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": f"c{i}", "labels": {"soak": "yes"}}}, namespace="default")
        async with Client(load_kubeconfig(hub_server.kubeconfig), qps=None) as hub:
            manager = Manager(hub, cache_grace_period=0.2)
            manager.add(Controller("everywhere", for_="v1/ConfigMap", label_selector="soak=yes", reconcile=reconcile))
            async with manager:
                tracemalloc.start(10)
                samples: list[dict[str, Any]] = []
                start = time.monotonic()
                cycle = 0
                while time.monotonic() - start < SECONDS:
                    edge = f"edge-{cycle % 3}"
                    first, second = cycle % 2, 1 - cycle % 2
                    seen.clear()
                    manager.add_cluster(edge, edges[first])
                    on_first, on_second = Request(edge, "default", f"c{first}"), Request(edge, "default", f"c{second}")
                    await eventually(lambda r=on_first: r in seen, timeout=30)
                    await manager.replace_cluster(edge, edges[second])
                    await eventually(lambda r=on_second: r in seen, timeout=30)
                    await manager.idle()
                    await manager.remove_cluster(edge)
                    await asyncio.sleep(0.3)  # past the grace period: unused informers collected
                    gc.collect()
                    samples.append({"t": round(time.monotonic() - start, 1), "cycle": cycle,
                                    "traced": traced_bytes(), "tasks": len(asyncio.all_tasks())})
                    cycle += 1
                tracemalloc.stop()
        assert cycle >= 10, f"only {cycle} cycles in {SECONDS}s"
        warm = samples[len(samples) // 5]
        last = samples[-1]
        figures = {"seconds": SECONDS, "cycles": cycle, "engagements": 2 * cycle, "warm": warm, "last": last,
                   "traced_growth_kib": round((last["traced"] - warm["traced"]) / 1024, 1),
                   "tasks_max": max(s["tasks"] for s in samples[len(samples) // 5:])}
        print("\nsoak:", json.dumps(figures))
        assert last["tasks"] <= warm["tasks"], figures
        assert last["traced"] - warm["traced"] < 1024 * 1024, figures  # < 1 MiB over the whole soak
