"""What both sides share, stdlib only (so it costs neither side import time): the report lines a
side prints on stdout, its memory read from /proc, and the parent's commands on stdin.

A side runs as ``python -m benchmarks.versus.<side>_side MODE KIND NAMESPACE KUBECONFIG``; MODE is
``warmup`` (time from launch to synced), ``memory`` (RSS growth over a warmed baseline, at sync
and after compaction), ``traced`` (the same with tracemalloc on), ``churn`` (CPU per watch event;
kubeloop's ``churn-sink`` with its subscriber's live events handed to a function) or ``scale`` (``memory`` plus `get` latency and the garbage collector's pause, `reads`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

LABEL = "peers/group"
"""The label both sides index by (10 values; the objects of `benchmarks.peers.seed`)."""

LOAD_CHEAP_LIMIT_ENV = "VERSUS_LOAD_CHEAP_LIMIT"
"""Set by ``--load-cheap-limit``: kubeloop's informers' `load_cheap_limit` (unset: the library's)."""

COMPRESSION_ENV = "VERSUS_COMPRESSION"
"""Set by ``--compression``: kubeloop's `Client(compression=...)`, "on", "off" or "auto" (the default)."""

_PAGE = os.sysconf("SC_PAGE_SIZE")


def emit(event: str, **fields: Any) -> None:
    """One report line to the parent: ``{"event": ..., "t": wall clock, ...}``."""
    sys.stdout.write(json.dumps({"event": event, "t": time.time(), **fields}) + "\n")
    sys.stdout.flush()


def rss() -> int:
    """Resident bytes now (no malloc_trim: what the process holds as it runs)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def hwm() -> int:
    """Peak resident bytes so far (VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def args() -> tuple[str, str, str, str]:
    """MODE, KIND (plural resource), NAMESPACE, KUBECONFIG."""
    mode, kind, namespace, kubeconfig = sys.argv[1:5]
    return mode, kind, namespace, kubeconfig


async def commands() -> Any:
    """The parent's commands, one per stdin line, as an async iterator of stripped strings."""
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


async def answer_marks(seen: list[int], settle: Callable[[], Awaitable[None]] | None = None) -> None:
    """The churn protocol, after "ready": ``count`` -> events seen; ``mark`` -> CPU seconds and
    events seen (after ``settle()``, the side's own pending work); ``quit`` (or stdin closed) ends."""
    async for line in await commands():
        cmd = line.decode().strip()
        if cmd == "count":
            emit("count", events=seen[0])
        elif cmd == "mark":
            if settle is not None:
                await settle()
            emit("mark", cpu=time.process_time(), events=seen[0])
        elif cmd == "quit":
            return


async def until_closed() -> None:
    """Hold the state until the parent closes stdin (the process then exits normally)."""
    async for _ in await commands():
        pass


def reads(calls: list[tuple[Any, ...]], get: Callable[..., Any]) -> dict[str, Any]:
    """``get(*args)`` timed for each args in ``calls`` (keys picked at random by the caller):
    p50 and p99 in µs; then the pause one full garbage collection takes with this state held (the
    median of three ``gc.collect()``: a collection stops the event loop for that long) and the
    number of objects the collector tracks."""
    import gc

    times = []
    clock = time.perf_counter_ns
    for args in calls:
        t = clock()
        get(*args)
        times.append(clock() - t)
    times.sort()
    pauses = []
    for _ in range(3):
        t = clock()
        gc.collect()
        pauses.append(clock() - t)
    return {"get_p50_us": times[len(times) // 2] / 1e3, "get_p99_us": times[int(len(times) * 0.99)] / 1e3,
            "gc_pause_ms": sorted(pauses)[1] / 1e6, "gc_tracked": len(gc.get_objects())}


def resource_of(kind: str) -> str:
    """The API resource of a plural name the parent uses."""
    return {"configmaps": "v1/ConfigMap", "pods": "v1/Pod"}[kind]


def run(main: Any, loop_factory: Any = None) -> None:
    """``asyncio.run(main())`` (on ``loop_factory()``'s loop if given); under cProfile when
    $VERSUS_PROFILE names a file (``--profile``)."""
    import asyncio

    def go() -> None:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(main())

    path = os.environ.get("VERSUS_PROFILE")
    if not path:
        go()
        return
    import cProfile

    prof = cProfile.Profile()
    try:
        prof.runcall(go)
    finally:
        prof.dump_stats(path)
