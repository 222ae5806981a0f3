"""Soak: Pipelines and clusters created and deleted for minutes; memory and tasks must stay flat.

Deselected by default (the ``soak`` marker); run with ``make test-soak`` or
``pytest -m soak examples/pipeline -s`` (``KUBELOOP_SOAK_SECONDS``, default 150). The three clusters
are `kubeloop apiserver` child processes, so what is measured is this process alone: the
Manager, its caches, clients and tasks. Each cycle adds an edge cluster (a new client), creates
Pipelines targeting it, waits for their status, deletes them and removes the cluster.
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

from kubeloop import Client, Manager
from kubeloop.client import NotFound
from kubeloop.config import load_kubeconfig
from kubeloop.testing import APIServerProcess, eventually, install_crd

from .controller import PIPELINE, make_controller
from .controller import install_crd as install_pipeline_crd
from .test_pipeline import pipeline, set_release, target_crd

pytestmark = pytest.mark.soak

SECONDS = float(os.environ.get("KUBELOOP_SOAK_SECONDS", "150"))
PIPELINES = 5


def traced_bytes() -> int:
    """Memory traced now, leaving out what this test allocates itself (its samples)."""
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, __file__),
                                                          tracemalloc.Filter(False, tracemalloc.__file__)])
    return sum(t.size for t in snapshot.traces)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def test_memory_and_tasks_stay_flat_while_pipelines_and_clusters_churn() -> None:
    with APIServerProcess() as hub_server, APIServerProcess() as e0, APIServerProcess() as e1:
        edges = [load_kubeconfig(e0.kubeconfig), load_kubeconfig(e1.kubeconfig)]
        for config in edges:
            async with Client(config, qps=None) as c:
                await install_crd(c, target_crd("Release", "releases"))
            for j in range(PIPELINES):
                await set_release(config, f"r{j}", ready=True)
        async with Client(load_kubeconfig(hub_server.kubeconfig), qps=None) as hub:
            await install_pipeline_crd(hub)
            manager = Manager(hub, cache_grace_period=0.2)
            manager.add(make_controller())
            async with manager:
                tracemalloc.start(10)
                snapshots: list[tracemalloc.Snapshot] = []
                samples: list[dict[str, Any]] = []
                start = time.monotonic()
                cycle = 0
                while time.monotonic() - start < SECONDS:
                    edge = f"edge-{cycle % 2}"
                    manager.add_cluster(edge, edges[cycle % 2])
                    names = [f"p{cycle}-{j}" for j in range(PIPELINES)]
                    for j, name in enumerate(names):
                        await hub.create(pipeline(name, [("prod", edge, f"r{j}")]), namespace="default")

                    async def all_ready(names: list[str] = names) -> bool:
                        for name in names:
                            status = (await hub.get(PIPELINE, name, namespace="default")).get("status") or {}
                            if [e.get("ready") for e in status.get("environments") or ()] != ["True"]:
                                return False
                        return True
                    await eventually(all_ready, timeout=30)
                    for name in names:
                        await hub.delete(PIPELINE, name, namespace="default")

                    async def all_gone(names: list[str] = names) -> bool:
                        for name in names:
                            try:
                                await hub.get(PIPELINE, name, namespace="default")
                                return False
                            except NotFound:
                                pass
                        return True
                    await eventually(all_gone, timeout=30)
                    await manager.idle()
                    await manager.remove_cluster(edge)
                    await asyncio.sleep(0.3)  # past the grace period: unused informers collected
                    gc.collect()
                    samples.append({"t": round(time.monotonic() - start, 1), "cycle": cycle,
                                     "traced": traced_bytes(), "rss": rss_bytes(),
                                     "tasks": len(asyncio.all_tasks())})
                    if cycle == 10 or time.monotonic() - start >= SECONDS:
                        snapshots.append(tracemalloc.take_snapshot())
                    cycle += 1
                tracemalloc.stop()
        assert cycle >= 10, f"only {cycle} cycles in {SECONDS}s"
        warm = samples[len(samples) // 5]  # after warm-up (imports, first caches, discovery)
        last = samples[-1]
        figures = {"seconds": SECONDS, "cycles": cycle, "pipelines": cycle * PIPELINES, "clusters_added": cycle,
                   "warm": warm, "last": last,
                   "traced_growth_kib": round((last["traced"] - warm["traced"]) / 1024, 1),
                   "rss_growth_mib": round((last["rss"] - warm["rss"]) / 2**20, 2),
                   "tasks_max": max(s["tasks"] for s in samples[len(samples) // 5:])}
        print("\nsoak:", json.dumps(figures))
        if len(snapshots) == 2:  # where memory grew between cycle 10 and the end, if anywhere
            for stat in snapshots[1].compare_to(snapshots[0], "traceback")[:5]:
                print(stat)
                print("\n".join(stat.traceback.format()[-6:]))
        assert last["tasks"] <= warm["tasks"], figures
        assert last["traced"] - warm["traced"] < 1024 * 1024, figures  # < 1 MiB over the whole soak
