"""What the Manager runs: `Runnable`s, in `RunnableGroup`s started in a fixed order.

Every part of a running Manager is a runnable: the probe server, the caches, each controller, each
runnable added with `Manager.add_runnable` (`ClustersFromSecrets` is one), leader election or
sharding, the readiness log (and the webhook server, when there is one). controller-runtime's
``pkg/manager/runnable_group.go`` is the model: a runnable says whether it needs leadership, and
belongs to one group; the groups start in this order, and stop in the reverse one:

1. ``servers``: the probe and metrics server (webhook servers join it). Each must have *started*
   (its ports bound) before the next one starts: a port that is taken fails start-up at once.
2. ``caches``: the default cluster reached, one `SharedCache`, and every informer anyone needs
   opened (not synced: a slow informer delays only the controllers that use it).
3. ``others``: what runs on every replica: controllers added with ``leader_election=False``,
   runnables that do not need leadership, the readiness log.
4. ``election``: leader election or sharding (the manager has at most one of them).
5. ``leader``: what needs leadership (controllers by default). Started when this replica leads,
   stopped at once when it stops leading; under sharding or without election, started at once.

A runnable's ``run(stop)`` runs until ``stop`` is set and then returns within ``stop.grace``
seconds (the group cancels it after that, with a warning). An exception from it fails the manager
with one line (and the traceback in the log, unless the error explains itself).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from kubeloop.controller import ControllerError
from kubeloop.manager._errors import ManagerError

if TYPE_CHECKING:
    from kubeloop.manager._manager import Manager
    from kubeloop.manager._phase import Lifecycle

__all__ = ["GROUPS", "FunctionRunnable", "Runnable", "RunnableFn", "RunnableGroup", "Stop", "failure",
           "run_until_stopped"]

log = logging.getLogger("kubeloop.manager")

GROUPS = ("servers", "caches", "others", "election", "leader")
"""The runnable groups, in the order they start (they stop in the reverse order)."""

_STOP_MARGIN = 10.0
"""Seconds past its grace a runnable that has not returned is given before it is cancelled."""

RunnableFn = Callable[["Manager"], Awaitable[None]]
"""A runnable as a function: ``async def fn(manager) -> None`` (cancelled when asked to stop)."""


class Stop:
    """The Manager's side of one run of a `Runnable`: when to stop and how long it may take (``wait``,
    ``is_set``, ``grace``), and the two things the runnable tells the manager (``started``,
    ``changed``)."""

    def __init__(self, notify: Callable[[], None]) -> None:
        self._stop = asyncio.Event()
        self._started = asyncio.Event()
        self._notify = notify
        self.grace = 0.0

    def is_set(self) -> bool:
        """True once the manager asked the runnable to stop."""
        return self._stop.is_set()

    async def wait(self) -> None:
        """Return once the manager asks the runnable to stop."""
        await self._stop.wait()

    def set(self, grace: float) -> None:
        """Ask the runnable to stop within ``grace`` seconds (the group does this)."""
        self.grace = grace
        self._stop.set()

    def started(self) -> None:
        """The runnable is up (ports bound, caches opened): in ``servers`` and ``caches`` the next
        runnable starts only then."""
        self._started.set()
        self._notify()

    def changed(self) -> None:
        """The runnable's `Runnable.readiness` changed: whoever waits for the manager re-checks now."""
        self._notify()


class Runnable(Protocol):
    """Work the Manager starts, watches and stops (see the module docstring).

    - ``name``: for logs and failures.
    - ``needs_leader``: True runs it in the ``leader`` group (on the leader, or on every replica
      under sharding), False on every replica.
    - ``run(stop)``: run until `Stop` is set, then return within ``stop.grace`` seconds; call
      ``stop.started()`` once up and ``stop.changed()`` when its readiness changes.
    - ``readiness()``: why it is not ready (empty: ready); ``/readyz`` and `Manager.wait_ready`
      count it while its group runs.

    A runnable may also declare ``reads``: (resource, namespace or None) pairs it lists and watches,
    for the RBAC rules `kubeloop manifests` derives.
    """

    @property
    def name(self) -> str: ...

    @property
    def needs_leader(self) -> bool: ...

    async def run(self, stop: Stop, /) -> None: ...

    def readiness(self) -> list[str]: ...


def _leaves(exc: BaseException) -> list[BaseException]:
    """The errors inside (nested) exception groups, in order; an error that is no group is its own."""
    if not isinstance(exc, BaseExceptionGroup):
        return [exc]
    return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]


def failure(what: str, exc: BaseException) -> tuple[str, BaseException | None]:
    """The one line ``what``'s failure is reported with, and the exception whose traceback to log
    (None for an error that explains itself: `ManagerError`, `ControllerError`). The errors inside
    TaskGroups' groups are what is named and logged, never ``unhandled errors in a TaskGroup``: one
    error is that error (its own traceback), several are each named (the group's tracebacks show
    each one's)."""
    leaves = _leaves(exc)
    if len(leaves) == 1:
        leaf = leaves[0]
        if isinstance(leaf, ManagerError):
            return str(leaf), None
        return f"{what} failed: {type(leaf).__name__}: {leaf}", None if isinstance(leaf, ControllerError) else leaf
    named = "; ".join(f"{type(e).__name__}: {e}" for e in leaves)
    explained = all(isinstance(e, ManagerError | ControllerError) for e in leaves)
    return f"{what} failed with {len(leaves)} errors: {named}", None if explained else exc


async def run_until_stopped(stop: Stop, work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` until it returns or ``stop`` is set (then it is cancelled)."""
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(work)
        stopped = tg.create_task(stop.wait())
        await asyncio.wait([task, stopped], return_when=asyncio.FIRST_COMPLETED)
        task.cancel()
        stopped.cancel()


class FunctionRunnable:
    """``async def fn(manager)`` as a `Runnable` (what `Manager.add_runnable` makes of a function):
    cancelled when asked to stop; ready from the start."""

    def __init__(self, fn: RunnableFn, manager: Manager, *, name: str, needs_leader: bool) -> None:
        self.fn = fn
        self.manager = manager
        self.name = name
        self.needs_leader = needs_leader

    @property
    def reads(self) -> tuple[tuple[str, str | None], ...]:
        """What the function declares it lists and watches (its ``reads`` attribute)."""
        return tuple(getattr(self.fn, "reads", ()))

    async def run(self, stop: Stop) -> None:
        await run_until_stopped(stop, self._call())

    async def _call(self) -> None:
        result = self.fn(self.manager)
        if inspect.isawaitable(result):
            await result

    def readiness(self) -> list[str]:
        return []


class RunnableGroup:
    """Runnables started together and stopped together (see the module docstring)."""

    def __init__(self, name: str, *, wait_started: bool = False) -> None:
        self.name = name
        self.wait_started = wait_started
        self.members: list[Runnable] = []
        self._runs: list[tuple[Runnable, asyncio.Task[None], Stop]] | None = None  # None: not running

    @property
    def running(self) -> bool:
        """Started and not stopped since."""
        return self._runs is not None

    def add(self, runnable: Runnable) -> None:
        self.members.append(runnable)

    async def start(self, tg: asyncio.TaskGroup, life: Lifecycle) -> bool:
        """Start every member as a task of ``tg``, in order; in a group that waits, each once the one
        before has started (or ended). False if a stop was asked meanwhile."""
        runs = self._runs = []
        for runnable in self.members:
            stop = Stop(life.changed)
            task = tg.create_task(self._guarded(runnable, stop, life), name=f"{self.name}: {runnable.name}")
            runs.append((runnable, task, stop))
            if self.wait_started:
                started = asyncio.ensure_future(stop._started.wait())
                stopping = asyncio.ensure_future(life.stop_requested.wait())
                try:
                    await asyncio.wait([started, stopping, task], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    started.cancel()
                    stopping.cancel()
            if life.stop_requested.is_set():
                return False
        life.changed()
        return True

    @staticmethod
    async def _guarded(runnable: Runnable, stop: Stop, life: Lifecycle) -> None:
        """Run ``runnable``; an exception fails the manager (never the TaskGroup's owner)."""
        try:
            await runnable.run(stop)
        except Exception as exc:
            message, traceback = failure(runnable.name, exc)
            life.fail(message, traceback)
        finally:
            life.changed()

    async def stop(self, grace: float) -> None:
        """Ask every member to stop within ``grace`` seconds and wait for them (cancelling, with a
        warning, any that has not returned some seconds after that)."""
        runs, self._runs = self._runs, None
        if not runs:
            return
        for _, _, stop in runs:
            stop.set(grace)
        tasks = [task for _, task, _ in runs]
        _, late = await asyncio.wait(tasks, timeout=grace + _STOP_MARGIN)
        for runnable, task, _ in runs:
            if task in late:
                log.warning("%s did not stop within %.1fs; cancelling it", runnable.name, grace + _STOP_MARGIN)
                task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    def readiness(self) -> list[str]:
        """Why the members are not ready (empty: all are)."""
        return [reason for runnable in self.members for reason in runnable.readiness()]
