"""`run_event_loop`: run a program's main coroutine on the fastest event loop installed.

uvloop (libuv, compiled; a dependency of kubeloop where it builds: Linux and macOS) runs the same
asyncio code with less overhead per loop iteration and a compiled TLS layer. A watch event costs
an informer one to three loop iterations and a TLS read; measured against a real 1.24 API server
(2,000 ConfigMap changes at 400/s, `benchmarks.versus`' informer with one index and one
subscriber task), CPU per event fell by 12-25%: 181-183 us against 206-214 us in two interleaved
pairs of the benchmark's runs, 78-82 us against 101-124 us in four in-process runs while the
machine was busier (the server then sends more events per read).
``KUBELOOP_EVENT_LOOP=asyncio`` keeps asyncio's own loop (to compare, or to debug with its tools).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EVENT_LOOP_ENV", "event_loop_factory", "run_event_loop"]

T = TypeVar("T")

EVENT_LOOP_ENV = "KUBELOOP_EVENT_LOOP"
"""``asyncio`` to use asyncio's own loop even where uvloop is installed."""


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory when uvloop is installed (and not turned off), else None (asyncio's)."""
    if os.environ.get(EVENT_LOOP_ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run_event_loop(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop of `event_loop_factory` (what ``kubeloop run`` uses)."""
    with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
        return runner.run(main)
