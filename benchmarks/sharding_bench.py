"""Sharding throughput: a backlog of 300 keys whose reconciles take 50 ms each, on 1 and on 3
`kubeloop run --sharding` replicas (one worker each), against `kubeloop apiserver` in its own
process.

Each replica may run one reconcile at a time in both runs, so any speed-up comes from spreading
the keys. The backlog appears at once on every replica: the items' own changes are filtered out
(a predicate), and one "trigger" ConfigMap, watched by every replica, maps to every cached item;
each replica reconciles the ones it owns. The time is from the trigger's write to the end of the
last reconcile, both on CLOCK_MONOTONIC (system-wide, so comparable across processes).

    .venv/bin/python benchmarks/sharding_bench.py [--keys 300] [--work 0.05] [--replicas 1,3] [--rounds 2]

Then, with two replicas or more, one membership change: the last replica is killed (SIGKILL, as a
crashed pod) and every reconcile the others start from then until they have agreed on the new view
(and 3 s more) is counted: the keys that moved should be reconciled once each by their new owner,
and the keys that did not move not at all ("reconciles per membership change").

Writes benchmarks/results/sharding.json and prints a short table. This file is also the module the
replicas run (``setup(manager)`` below).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kubeloop import Context, Controller, Manager, Request, Result  # noqa: E402

NAMESPACE = "bench"
LINE = re.compile(r"BENCH (\S+) (\d+) ([0-9.]+)")
CALL = re.compile(r"BENCH-CALL (\S+) ([0-9.]+)")
SETTLE = 3.0  # seconds counted after the survivors agreed on the view without the killed replica

# ---------------------------------------------------------------------- the replicas' module

log = logging.getLogger("sharding_bench")
_round: dict[str, int] = {"current": 0}
_done: dict[str, int] = {}
_controller: list[Controller] = []


def _trigger(obj: Mapping[str, Any]) -> list[Request]:
    """The trigger changed: a new round; every cached item is due (the gate keeps ours)."""
    rnd = int((obj.get("data") or {}).get("round") or 0)
    if rnd > _round["current"]:
        _round["current"] = rnd
    return _controller[0].cached_requests() if _controller else []


async def reconcile(req: Request, ctx: Context) -> Result | None:
    log.info("BENCH-CALL %s %.6f", req.name, time.monotonic())
    rnd = _round["current"]
    if not rnd or _done.get(req.name) == rnd:
        return None  # before the first round, or already done in this one
    await asyncio.sleep(float(os.environ.get("SHARDING_BENCH_WORK", "0.05")))
    _done[req.name] = rnd
    log.info("BENCH %s %d %.6f", req.name, rnd, time.monotonic())
    return None


def setup(manager: Manager) -> None:
    ctl = Controller("sharding-bench", for_="v1/ConfigMap", namespace=manager.namespace,
                     label_selector={"bench": "item"}, predicates=lambda old, new: False, reconcile=reconcile,
                     max_concurrent_reconciles=1, record_events=False)
    ctl.watches("v1/ConfigMap", _trigger, namespace=manager.namespace, label_selector={"bench": "trigger"})
    _controller.append(ctl)
    manager.add(ctl)


# ---------------------------------------------------------------------- the driver

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Replica:
    """`kubeloop run --sharding` on this file; collects the BENCH lines of its log."""

    def __init__(self, kubeconfig: str, group: str, identity: str, work: float) -> None:
        self.port = free_port()
        self.identity = identity
        self.done: dict[str, tuple[int, float]] = {}  # key -> (round, when) of its last reconcile
        self.calls: list[tuple[str, float]] = []  # (key, when) of every reconcile started
        self.lines: list[str] = []
        env = {**os.environ, "SHARDING_BENCH_WORK": str(work), "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from kubeloop.cli.main import main; main()", "run", __file__,
             "--kubeconfig", kubeconfig, "--namespace", NAMESPACE, "--sharding", "--sharding-name", group,
             "--sharding-identity", identity, "--lease-duration", "3", "--renew-deadline", "2",
             "--retry-period", "0.5", "--health-port", str(self.port), "--metrics-port", "0",
             "--bind-address", "127.0.0.1"],
            cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip())
            m = LINE.search(line)
            if m:
                self.done[m[1]] = (int(m[2]), float(m[3]))
            c = CALL.search(line)
            if c:
                self.calls.append((c[1], float(c[2])))

    def members(self) -> int:
        """Live members this replica sees (0: not ready yet)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz?verbose", timeout=2) as r:
                text = r.read().decode()
        except OSError:
            return 0
        m = re.search(r": (\d+) member\(s\)", text)
        return int(m[1]) if m and text.startswith("ok") else 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)


async def populate(kubeconfig: str, keys: int) -> None:
    from kubeloop.client import Client, RetryPolicy
    from kubeloop.config import load_kubeconfig

    async with Client(load_kubeconfig(kubeconfig), retry=RetryPolicy(max_attempts=5, base_delay=0.05)) as client:
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        sem = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            async with sem:
                await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                    "name": f"item-{i}", "namespace": NAMESPACE, "labels": {"bench": "item"}}})

        await asyncio.gather(*(one(i) for i in range(keys)))
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "trigger", "namespace": NAMESPACE, "labels": {"bench": "trigger"}}, "data": {"round": "0"}})


async def trigger(kubeconfig: str, rnd: int) -> float:
    """Start round ``rnd``; returns when (monotonic) the write was sent."""
    from kubeloop.client import Client
    from kubeloop.config import load_kubeconfig

    async with Client(load_kubeconfig(kubeconfig)) as client:
        await client.get("v1/Namespace", NAMESPACE)  # connection warm: the timer starts at the write
        t0 = time.monotonic()
        await client.patch("v1/ConfigMap", "trigger", {"data": {"round": str(rnd)}}, namespace=NAMESPACE)
        return t0


def wait(cond: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def membership_change(replicas: list[Replica], keys: int) -> dict[str, Any]:
    """Kill the last replica; count the reconciles the others start until they agreed (+ SETTLE s)."""
    from kubeloop.manager._rendezvous import owner
    from kubeloop.manager._sharding import key_of

    victim, survivors = replicas[-1], replicas[:-1]
    before = tuple(r.identity for r in replicas)
    after = tuple(r.identity for r in survivors)
    t0 = time.monotonic()
    victim.proc.kill()
    wait(lambda: all(r.members() == len(survivors) for r in survivors), 30, "the survivors to drop the killed one")
    time.sleep(SETTLE)
    names = [f"item-{i}" for i in range(keys)]
    moved = {n for n in names if owner(key_of("default", NAMESPACE, n), before) !=
             owner(key_of("default", NAMESPACE, n), after)}
    calls = [name for r in survivors for name, t in r.calls if t >= t0 and name.startswith("item-")]
    of_moved = sum(1 for name in calls if name in moved)
    return {"change": f"SIGKILL of {victim.identity} ({len(replicas)} -> {len(survivors)} replicas)",
            "keys_moved": len(moved), "reconciles": len(calls), "reconciles_of_moved_keys": of_moved,
            "reconciles_of_unmoved_keys": len(calls) - of_moved,
            "moved_keys_reconciled": len(moved & set(calls))}


def run_config(kubeconfig: str, n: int, keys: int, work: float, rounds: int, first_round: int) -> dict[str, Any]:
    group = f"bench-{n}"
    replicas = [Replica(kubeconfig, group, f"r{i}", work) for i in range(n)]
    try:
        wait(lambda: all(r.members() == n for r in replicas), 60, f"{n} replica(s) to see each other")
        time.sleep(2.0)  # a few retry periods: every replica has adopted the view
        durations: list[float] = []
        per_replica: list[dict[str, int]] = []
        for rnd in range(first_round, first_round + rounds):
            t0 = asyncio.run(trigger(kubeconfig, rnd))

            def finished(rnd: int = rnd) -> bool:
                return sum(1 for r in replicas for v, _ in r.done.values() if v == rnd) >= keys

            wait(finished, 30 + keys * work * 2, f"round {rnd}")
            end = max(t for r in replicas for v, t in r.done.values() if v == rnd)
            durations.append(end - t0)
            per_replica.append({f"r{i}": sum(1 for v, _ in r.done.values() if v == rnd)
                                for i, r in enumerate(replicas)})
        row = {"replicas": n, "keys": keys, "work_seconds": work, "workers_per_replica": 1,
               "seconds": [round(d, 3) for d in durations], "median_seconds": round(statistics.median(durations), 3),
               "keys_per_replica": per_replica,
               "reconciles_per_second": round(keys / statistics.median(durations), 1)}
        if n >= 2:
            row["membership_change"] = membership_change(replicas, keys)
        return row
    finally:
        for r in replicas:
            r.stop()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=300, help="items in the backlog (default 300)")
    parser.add_argument("--work", type=float, default=0.05, help="seconds per reconcile (default 0.05)")
    parser.add_argument("--replicas", type=lambda s: [int(x) for x in s.split(",")], default=[1, 3],
                        help="replica counts to compare (default 1,3)")
    parser.add_argument("--rounds", type=int, default=2, help="backlogs per replica count; the median counts")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "sharding.json")
    args = parser.parse_args(argv)

    from kubeloop.testing._process import APIServerProcess

    rows: list[dict[str, Any]] = []
    with APIServerProcess() as api:
        asyncio.run(populate(api.kubeconfig, args.keys))
        for i, n in enumerate(args.replicas):
            rows.append(run_config(api.kubeconfig, n, args.keys, args.work, args.rounds, 1 + i * args.rounds))
    base = rows[0]["median_seconds"]
    for row in rows:
        row["speedup"] = round(base / row["median_seconds"], 2)
    result = {
        "benchmark": "sharding",
        "command": " ".join(["python benchmarks/sharding_bench.py", *argv]),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'replicas':>8} {'keys':>5} {'work ms':>7} {'seconds (median)':>16} {'reconciles/s':>12} "
          f"{'speed-up':>8}  keys per replica")
    for r in rows:
        print(f"{r['replicas']:>8} {r['keys']:>5} {r['work_seconds'] * 1000:>7.0f} {r['median_seconds']:>16} "
              f"{r['reconciles_per_second']:>12} {r['speedup']:>7}x  {r['keys_per_replica'][-1]}")
    for r in rows:
        ch = r.get("membership_change")
        if ch:
            print(f"membership change, {ch['change']}: {ch['reconciles']} reconciles; {ch['keys_moved']} keys moved, "
                  f"{ch['moved_keys_reconciled']} of them reconciled ({ch['reconciles_of_moved_keys']} reconciles); "
                  f"keys that did not move: {ch['reconciles_of_unmoved_keys']} reconciles")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(main())
