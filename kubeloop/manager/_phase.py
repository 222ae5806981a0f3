"""The Manager's life as one phase value and an explicit table of the moves between phases.

h11's ``_state.py`` and kubeloop's own `kubeloop.watch._phases` are the model: the phase is a
single value, every change goes through `Lifecycle.to`, which refuses a move the table does not
list, so no pair of flags can contradict each other::

    new -> starting -> running -> stopping -> stopped
               \\______________________^
                (a stop or a failure during start-up)

`Lifecycle` also carries what waiting needs: the stop request, the first failure, and a pulse
fired on every change of state the Manager knows of (a phase, a runnable started or ready, a
leadership change, what the readiness log noticed), so `until` waits on events, never on a timer.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from types import MappingProxyType
from typing import Final

from kubeloop.manager._errors import ManagerError

__all__ = ["TRANSITIONS", "Lifecycle", "Phase"]

log = logging.getLogger("kubeloop.manager")


class Phase(enum.StrEnum):
    """Where the Manager is in its one life (compares equal to its name: ``manager.state == "running"``)."""

    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"


TRANSITIONS: Final = MappingProxyType({
    Phase.NEW: frozenset({Phase.STARTING}),
    Phase.STARTING: frozenset({Phase.RUNNING, Phase.STOPPING}),
    Phase.RUNNING: frozenset({Phase.STOPPING}),
    Phase.STOPPING: frozenset({Phase.STOPPED}),
    Phase.STOPPED: frozenset(),
})
"""The moves `Lifecycle.to` allows, from each phase."""


class Lifecycle:
    """The phase, the stop request, the first failure and the change pulse of one Manager."""

    def __init__(self) -> None:
        self.phase = Phase.NEW
        self.failure: str | None = None
        self.stop_requested = asyncio.Event()
        self._pulse = asyncio.Event()

    def to(self, phase: Phase) -> None:
        """Move to ``phase``; `ManagerError` for a move the table does not allow."""
        if phase not in TRANSITIONS[self.phase]:
            if self.phase is not Phase.NEW and phase is Phase.STARTING:
                raise ManagerError(f"a Manager runs once (this one is {self.phase})")
            raise ManagerError(f"the manager cannot go from {self.phase} to {phase}")
        self.phase = phase
        self.changed()

    def changed(self) -> None:
        """Something waiters look at may have changed: wake them (each re-checks its condition)."""
        pulse, self._pulse = self._pulse, asyncio.Event()
        pulse.set()

    def request_stop(self) -> None:
        self.stop_requested.set()
        self.changed()

    def fail(self, message: str, exc: BaseException | None = None) -> None:
        """Record the first failure and ask to stop; ``exc``: an error whose traceback is worth logging
        (a bug, as opposed to one that explains itself)."""
        if self.failure is None:
            self.failure = message
            log.error("manager: %s", message, exc_info=exc)
        elif exc is not None:
            log.error("manager: also: %s", message, exc_info=exc)
        self.request_stop()

    async def until(self, condition: Callable[[], bool], timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until ``condition()`` holds (True), or until the manager stopped or ``timeout`` passed
        (then ``condition()``'s last answer). Re-checked at each `changed`, never on a timer."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    pulse = self._pulse  # taken before the check: a change in between is not missed
                    if condition():
                        return True
                    if self.phase is Phase.STOPPED:
                        return False
                    await pulse.wait()
        except TimeoutError:
            return condition()
