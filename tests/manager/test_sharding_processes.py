"""Issue 13, end to end: `kubeloop run --sharding` replicas in subprocesses on one `kubeloop
apiserver`, 300 ConfigMaps, signals sent for real (SIGKILL, SIGSTOP/SIGCONT, SIGTERM).

Every reconcile logs its start and end with ``time.monotonic()`` (CLOCK_MONOTONIC: one clock for
every process of the machine), so the test can check across processes that no two reconciles of
one key ever overlapped, whatever the membership did meanwhile. Leases last 3 s (renew deadline
2 s, retry 0.5 s) so the whole story runs in well under a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import signal
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from kubeloop import Client
from kubeloop.client import RetryPolicy
from kubeloop.config import load_kubeconfig
from kubeloop.manager._lease import LEASE
from kubeloop.testing import eventually

from .processes import Emulator, emulator_process, free_port, start_run

LEASE_DURATION = 3.0
N = 300
LINE = re.compile(r"RECONCILE (start|end) (\S+) (\S+) ([0-9.]+)")
LAPSE = "could not renew lease"


@dataclass
class Replica:
    name: str
    proc: asyncio.subprocess.Process
    port: int
    lines: list[str] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None
    killed_at: float | None = None

    async def read(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.lines.append(line.decode(errors="replace").rstrip())

    def reconciles(self) -> list[tuple[str, str, str, float]]:
        """(start|end, key, v, monotonic) in log order."""
        out = []
        for line in self.lines:
            m = LINE.search(line)
            if m:
                out.append((m[1], m[2], m[3], float(m[4])))
        return out

    def intervals(self, *, final: bool = False) -> list[tuple[str, str, float, float]]:
        """(key, v, start, end) of every finished reconcile (one key is never run twice at once
        here); ``final``: the process is over, and a reconcile it never ended died with it."""
        open_: dict[str, tuple[str, float]] = {}
        out = []
        for what, key, v, t in self.reconciles():
            if what == "start":
                assert key not in open_, f"{self.name} started {key} twice at once"
                open_[key] = (v, t)
            else:
                sv, st = open_.pop(key)
                out.append((key, sv, st, t))
        for key, (v, t) in open_.items() if final else ():
            assert self.killed_at is not None, f"{self.name}: reconcile of {key} never ended"
            out.append((key, v, t, self.killed_at))  # killed mid-reconcile: it ended with the process
        return out

    async def detail(self) -> str:
        async with aiohttp.ClientSession() as s, s.get(f"http://127.0.0.1:{self.port}/readyz?verbose") as r:
            return await r.text()


@contextlib.asynccontextmanager
async def cluster(tmp: Path) -> AsyncIterator[tuple[Emulator, Client, str]]:
    async with emulator_process(tmp) as api, \
            Client(load_kubeconfig(api.kubeconfig), retry=RetryPolicy(max_attempts=5, base_delay=0.05)) as client:
        ns = "sharding"
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        yield api, client, ns


async def start_replica(api: Emulator, ns: str, name: str) -> Replica:
    port = free_port()
    proc = await start_run("tests/manager/sharded_controller.py", "--kubeconfig", api.kubeconfig, "--namespace", ns,
                           "--sharding", "--sharding-name", "shardtest", "--sharding-identity", name,
                           "--lease-duration", str(LEASE_DURATION), "--renew-deadline", "2", "--retry-period", "0.5",
                           "--health-port", str(port), "--metrics-port", "0", "--bind-address", "127.0.0.1",
                           "--shutdown-timeout", "5")
    r = Replica(name, proc, port)
    r.reader = asyncio.create_task(r.read())
    return r


async def wait_members(replicas: list[Replica], n: int, within: float = 30.0) -> None:
    """Until every replica answers /readyz and sees ``n`` live members."""
    async with asyncio.timeout(within):
        for r in replicas:
            while True:
                if r.proc.returncode is not None:
                    raise AssertionError(f"{r.name} exited: " + "\n".join(r.lines[-30:]))
                with contextlib.suppress(aiohttp.ClientError):
                    text = await r.detail()
                    if text.startswith("ok") and f": {n} member(s)" in text:
                        break
                await asyncio.sleep(0.1)


ALL = [f"sharding/cm-{i}" for i in range(N)]


async def set_all(client: Client, v: str, keys: list[str] = ALL, *, create: bool = False) -> None:
    """Set ``data.v`` of the ConfigMaps ``keys`` (namespace/name), creating them with ``create``."""
    sem = asyncio.Semaphore(16)

    async def one(key: str) -> None:
        ns, name = key.split("/")
        async with sem:
            if create:
                await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": name, "namespace": ns, "labels": {"shard-test": "yes"}},
                                     "data": {"v": v}})
            else:
                await client.patch("v1/ConfigMap", name, {"data": {"v": v}}, namespace=ns)

    await asyncio.gather(*(one(k) for k in keys))


def first_ends(replicas: list[Replica], v: str) -> dict[str, tuple[float, str]]:
    """key -> (when, replica) of the first finished reconcile that saw ``v``."""
    out: dict[str, tuple[float, str]] = {}
    for r in replicas:
        for key, sv, _, end in r.intervals() if r.killed_at is None else []:
            if sv == v and (key not in out or end < out[key][0]):
                out[key] = (end, r.name)
    return out


def ended(replica: Replica, v: str) -> set[str]:
    return {key for key, sv, _, _ in replica.intervals() if sv == v}


async def wait_all(replicas: list[Replica], v: str, keys: list[str] = ALL,
                   within: float = 40.0) -> dict[str, tuple[float, str]]:
    """Until each of ``keys`` had a reconcile that saw ``v``; key -> (when it ended, by whom)."""
    live = [r for r in replicas if r.killed_at is None]
    try:
        return await eventually(lambda: set(keys) <= set(done := first_ends(live, v)) and done, within,
                                interval=0.1)
    except AssertionError:
        missing = len(set(keys) - set(first_ends(live, v)))
        tails = "\n".join(f"--- {r.name}\n" + "\n".join(r.lines[-15:]) for r in live)
        raise AssertionError(f"{missing} key(s) never reconciled with v={v}\n{tails}") from None


def assert_no_overlap(replicas: list[Replica]) -> int:
    by_key: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for r in replicas:
        for key, _, start, end in r.intervals(final=True):
            by_key[key].append((start, end, r.name))
    checked = 0
    for key, ivs in by_key.items():
        ivs.sort()
        for (s1, e1, r1), (s2, e2, r2) in itertools.pairwise(ivs):
            assert s2 >= e1, f"{key}: {r1} reconciled it over [{s1}, {e1}] and {r2} over [{s2}, {e2}]"
            checked += 1
    return checked


async def test_three_replicas_share_300_keys_and_never_run_one_key_twice(tmp_path: Path) -> None:
    replicas: list[Replica] = []
    try:
        async with cluster(tmp_path) as (api, client, ns):
            replicas = [await start_replica(api, ns, f"r{i}") for i in (1, 2, 3)]
            await wait_members(replicas, 3)

            # every key reconciled, the load spread
            await set_all(client, "1", create=True)
            done = await wait_all(replicas, "1")
            load = Counter(who for _, who in done.values())
            assert set(load) == {"r1", "r2", "r3"} and max(load.values()) <= N // 2, load

            # kill -9: the victim's keys are reconciled by the others within the lease duration + 5 s
            victim = max(replicas[:3], key=lambda r: load[r.name])
            its_keys = [k for k, (_, who) in done.items() if who == victim.name]
            victim.proc.send_signal(signal.SIGKILL)
            await victim.proc.wait()
            victim.killed_at = time.monotonic()
            await set_all(client, "2", its_keys)
            done = await wait_all(replicas, "2", its_keys)
            assert all(done[k][1] != victim.name for k in its_keys)
            late = max(done[k][0] for k in its_keys) - victim.killed_at
            assert late <= LEASE_DURATION + 5, late
            survivors = [r for r in replicas if r is not victim]

            # a new replica joins and takes its share
            newcomer = await start_replica(api, ns, "r4")
            replicas.append(newcomer)
            survivors.append(newcomer)
            await wait_members(survivors, 3)
            await set_all(client, "3")
            done = await wait_all(replicas, "3")
            load = Counter(who for _, who in done.values())
            assert load[newcomer.name] >= N // 5 and max(load.values()) <= N // 2, load

            # SIGSTOP one past its lease, with reconciles of some of its keys due while it sleeps
            # ("tick": run again in 3 s); meanwhile the others run slow reconciles of those keys.
            # Resumed, it must start none of them: its lease lapsed, it knows its keys only once
            # the others have handed them back.
            stopped = survivors[0]
            stopped_keys = [k for k, (_, who) in done.items() if who == stopped.name]
            due = stopped_keys[:8]
            await set_all(client, "tick", due)
            await eventually(lambda: set(due) <= ended(stopped, "tick"), 20, interval=0.01)
            stopped.proc.send_signal(signal.SIGSTOP)  # idle now: its next runs of `due` are in 3 s
            await asyncio.sleep(LEASE_DURATION + 1.5)
            rest = [k for k in stopped_keys if k not in due]
            await set_all(client, "4", rest)
            done = await wait_all([r for r in replicas if r is not stopped], "4", rest)
            assert all(who != stopped.name for _, who in done.values())
            await set_all(client, "slow", due)
            await eventually(lambda: set(due) <= {k for r in replicas if r is not stopped
                                                  for what, k, v, _ in r.reconciles() if what == "start" and v == "slow"},
                             20, interval=0.05)
            t_cont = time.monotonic()
            stopped.proc.send_signal(signal.SIGCONT)
            await wait_members(survivors, 3)
            await set_all(client, "5")
            done = await wait_all(replicas, "5")
            assert stopped.name in {who for _, who in done.values()}  # re-joined, took its share back
            lapse = next((i for i, line in enumerate(stopped.lines) if LAPSE in line), None)
            assert lapse is not None, "\n".join(stopped.lines[-30:])
            for i, line in enumerate(stopped.lines):
                m = LINE.search(line)
                if m and m[1] == "start" and float(m[4]) >= t_cont:
                    assert i > lapse, f"{stopped.name} started a reconcile before noticing its lease lapsed: {line}"

            # graceful leave (SIGTERM): the Lease is deleted, the keys move at once
            leaving = newcomer
            leaving_keys = [k for k, (_, who) in done.items() if who == leaving.name]
            leaving.proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(leaving.proc.wait(), 15) == 0, "\n".join(leaving.lines[-30:])
            assert any("left (deleted lease" in line for line in leaving.lines)
            leases = await client.list(LEASE, namespace=ns, label_selector={"kubeloop.dev/shard": "shardtest"})
            assert "r4" not in {(x.get("spec") or {}).get("holderIdentity") for x in leases.items}
            t_left = time.monotonic()
            others = [r for r in survivors if r is not leaving]
            await wait_members(others, 2)
            assert time.monotonic() - t_left < LEASE_DURATION  # did not wait for the lease to expire
            await set_all(client, "6", leaving_keys)
            done = await wait_all(replicas, "6", leaving_keys)
            assert {who for _, who in done.values()} == {r.name for r in others}

            assert assert_no_overlap(replicas) > N  # keys changed hands, never at the same time
    finally:
        for r in replicas:
            if r.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    r.proc.send_signal(signal.SIGCONT)
                    r.proc.kill()
                await r.proc.wait()
            if r.reader is not None:
                await r.reader
