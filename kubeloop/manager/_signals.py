"""SIGTERM/SIGINT handling for a Manager process: the first signal asks for a graceful shutdown,
a second one exits at once (as controller-runtime's signal handler does: exit code 1).

Kubernetes sends SIGTERM when it stops a pod and SIGKILL ``terminationGracePeriodSeconds`` later;
a person at a terminal presses Ctrl-C once to stop cleanly and again to stop *now*.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from types import TracebackType

__all__ = ["SHUTDOWN_SIGNALS", "ShutdownSignals"]

SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT)

log = logging.getLogger("kubeloop.manager")


class ShutdownSignals:
    """``with ShutdownSignals(on_first):`` while the event loop runs; handlers removed on exit.

    ``on_first(signame)`` runs on the loop for the first signal; any later one writes a line to
    stderr and calls ``os._exit(exit_code)`` (no cleanup: the operator asked to stop now).
    """

    def __init__(self, on_first: Callable[[str], None], *, exit_code: int = 1,
                 signals: tuple[signal.Signals, ...] = SHUTDOWN_SIGNALS) -> None:
        self._on_first = on_first
        self._exit_code = exit_code
        self._signals = signals
        self._loop: asyncio.AbstractEventLoop | None = None
        self.received: list[str] = []

    def _handle(self, sig: signal.Signals) -> None:
        self.received.append(sig.name)
        if len(self.received) == 1:
            log.info("received %s: shutting down gracefully (send it again to exit at once)", sig.name)
            self._on_first(sig.name)
            return
        sys.stderr.write(f"received {sig.name} again: exiting now\n")
        sys.stderr.flush()
        os._exit(self._exit_code)

    def __enter__(self) -> ShutdownSignals:
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.add_signal_handler(sig, self._handle, sig)
        self._loop = loop
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            for sig in self._signals:
                loop.remove_signal_handler(sig)
