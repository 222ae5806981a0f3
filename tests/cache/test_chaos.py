"""Chaos: informers, narrowed subscribers and a controller through random faults, then every reader
is checked against a fresh LIST.

Bounded: ``KUBELOOP_CHAOS_SECONDS`` (default 3) of churn and faults; set it higher (e.g. 60) for a
longer storm. ``KUBELOOP_CHAOS_SEED`` replays one run. Needs the emulator's fault injection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import time
from typing import Any

from kubeloop.cache import SharedCache
from kubeloop.client import ApiError, Client
from kubeloop.controller import Context, Controller, Request, Result
from kubeloop.meta import ADDED, DELETED, MODIFIED, RESYNC
from kubeloop.testing import eventually
from kubeloop.watch import WatchConfig

from .informer_support import CM, client, ns

__all__ = ["client", "ns"]

LABEL = "kubeloop-chaos"
CHAOS = WatchConfig(backoff_initial=0.02, backoff_max=0.3, backoff_reset_after=2.0, min_watch_duration=0.05,
                    healthy_watch_duration=0.5, page_size=5, streaming_list=True, list_deadline=5.0)


def _cm(name: str, team: str, v: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {LABEL: "1", "team": team}}, "data": {"v": str(v)}}


async def _churn(client: Client, ns: str, rng: random.Random, names: list[str]) -> None:
    """One random write: create, move between teams, change, or delete (errors from faults ignored)."""
    name = rng.choice(names)
    op = rng.random()
    with contextlib.suppress(ApiError):
        if op < 0.3:
            await client.create(_cm(name, rng.choice("ab"), 0), namespace=ns)
        elif op < 0.6:
            await client.patch(CM, name, {"metadata": {"labels": {"team": rng.choice("ab")}}}, namespace=ns)
        elif op < 0.8:
            await client.patch(CM, name, {"data": {"v": str(rng.randrange(1000))}}, namespace=ns)
        else:
            await client.delete(CM, name, namespace=ns)


def _fault(emulator: Any, rng: random.Random) -> str:
    faults = emulator.faults
    pick = rng.randrange(6)
    if pick == 0:
        faults.close_watches("configmaps")
        return "close"
    if pick == 1:
        faults.expire_next_watch("configmaps", rng.randint(1, 3))
        return "expire"
    if pick == 2:
        faults.compact()
        return "compact"
    if pick == 3:
        faults.fail_next(rng.randint(1, 5), rng.choice((500, 503)), resource="configmaps", verbs=("list", "watch"))
        return "fail"
    if pick == 4:
        faults.delay(rng.uniform(0.01, 0.1), resource="configmaps")
        return "delay"
    faults.delay(0)
    return "undelay"


async def test_chaos_every_reader_matches_a_fresh_list(client: Client, ns: str, emulator: Any,
                                                      caplog: Any) -> None:
    caplog.set_level(logging.CRITICAL, logger="kubeloop")  # faults are expected to be logged
    seconds = float(os.environ.get("KUBELOOP_CHAOS_SECONDS", "3"))
    seed = int(os.environ.get("KUBELOOP_CHAOS_SEED", str(random.randrange(1 << 30))))
    rng = random.Random(seed)
    names = [f"c{i}" for i in range(16)]
    sel = f"{LABEL}=1"
    seen_by_controller: dict[str, str | None] = {}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        obj = ctx.get()
        seen_by_controller[req.name] = None if obj is None else obj["metadata"]["resourceVersion"]
        return None

    async with SharedCache(client, watch_config=CHAOS, grace_period=0.5) as cache:
        # narrow first, broad later: the broad one takes the narrow users over mid-storm
        team_a = await cache.informer_for("default", CM, namespace=ns, label_selector=f"{sel},team=a")
        slow = team_a.subscribe(queue_size=3)  # overflows: resyncs while narrowed
        ctl = Controller("chaos", for_=CM, namespace=ns, label_selector=f"{sel},team=b", reconcile=reconcile)
        known: dict[str, bool] = {}
        faults: list[str] = []
        async with asyncio.TaskGroup() as tg:
            await ctl.start(tg, cache, timeout=10)
            broad = await cache.informer_for("default", CM, namespace=ns, label_selector=sel)

            async def read_slowly() -> None:
                while True:
                    ev = await slow.get()
                    if ev.type in (ADDED, MODIFIED):
                        known[ev.name] = True
                    elif ev.type == DELETED:
                        known.pop(ev.name, None)
                    elif ev.type == RESYNC:
                        pass  # level-triggered: the resync's deletes and adds follow
                    await asyncio.sleep(rng.uniform(0, 0.01))

            reader = tg.create_task(read_slowly())
            try:
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    for _ in range(rng.randint(1, 4)):
                        await _churn(client, ns, rng, names)
                    if rng.random() < 0.3:
                        faults.append(_fault(emulator, rng))
                    await asyncio.sleep(rng.uniform(0, 0.03))
                emulator.faults.reset()
                await broad.wait_synced(10)

                truth: dict[str, dict[str, Any]] = {}

                async def fresh() -> None:
                    listed = await client.list(CM, namespace=ns, label_selector=sel)
                    truth.clear()
                    truth.update({o["metadata"]["name"]: o for o in listed.items})

                def rvs(objs: Any) -> dict[str, str]:
                    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in objs}

                def team(t: str) -> dict[str, str]:
                    return {n: o["metadata"]["resourceVersion"] for n, o in truth.items()
                            if o["metadata"]["labels"].get("team") == t}

                async def converged() -> bool:
                    await fresh()
                    return (rvs(broad.list()) == rvs(truth.values())
                            and rvs(team_a.list()) == team("a")
                            and set(known) == set(team("a"))
                            and {n: v for n, v in seen_by_controller.items() if v is not None} == team("b"))

                ok = False
                for _ in range(200):  # converges within seconds of the server being healthy (20 s bound)
                    if ok := await converged():
                        break
                    await asyncio.sleep(0.1)
                assert ok, (f"seed {seed}: readers differ from a fresh LIST after faults {faults}: "
                            f"broad={sorted(rvs(broad.list()).items())} truth={sorted(rvs(truth.values()).items())} "
                            f"team_a={sorted(team_a.keys())} slow={sorted(known)} "
                            f"controller={sorted(seen_by_controller.items())}")
                assert team_a.informer is broad.informer  # taken over, one watch
                await eventually(lambda: ctl.ready and broad.ready, what="ready after the storm")
            finally:
                reader.cancel()
                await ctl.stop(drain_timeout=5)
