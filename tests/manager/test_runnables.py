"""The Manager as a runner of runnables (issue 29 item 3): the `Runnable` protocol, the groups and
their order, the lifecycle's phase table, waits that wake on events, failures with tracebacks."""

from __future__ import annotations

import asyncio
import logging
import traceback
from dataclasses import dataclass
from typing import Any

import pytest

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.client import Client
from kubeloop.manager import ManagerError, Phase, Stop
from kubeloop.manager._phase import TRANSITIONS, Lifecycle
from kubeloop.testing import eventually


@dataclass(eq=False)
class Recorder:
    """A runnable that notes when it starts and stops, and whether the manager had its cache then."""

    name: str
    log: list[tuple[str, str, bool]]
    manager: Manager
    needs_leader: bool = False
    warming: bool = False

    async def run(self, stop: Stop) -> None:
        self.log.append(("start", self.name, self.manager.cache is not None))
        stop.started()
        await stop.wait()
        self.log.append(("stop", self.name, self.manager.cache is not None))

    def readiness(self) -> list[str]:
        return [f"{self.name}: warming up"] if self.warming else []


async def failed_with(m: Manager, message: str, caplog: pytest.LogCaptureFixture) -> logging.LogRecord:
    """Start ``m``, wait for it to fail with ``message``, and return the log record that reported it."""
    with caplog.at_level(logging.ERROR, "kubeloop.manager"):
        await m.start()
        await eventually(lambda: m.failure is not None, what="the manager failed")
        with pytest.raises(ManagerError, match=message):
            await m.close()
    return next(r for r in caplog.records if r.getMessage() == f"manager: {m.failure}")


def test_the_phase_table_allows_only_the_lifecycle_moves() -> None:
    life = Lifecycle()
    assert life.phase == "new" and Phase.RUNNING == "running"
    with pytest.raises(ManagerError, match="cannot go from new to running"):
        life.to(Phase.RUNNING)
    for phase in (Phase.STARTING, Phase.RUNNING, Phase.STOPPING, Phase.STOPPED):
        life.to(phase)
    with pytest.raises(ManagerError, match="runs once"):
        life.to(Phase.STARTING)
    assert TRANSITIONS[Phase.STOPPED] == frozenset()
    assert all(Phase.STOPPING in TRANSITIONS[p] for p in (Phase.STARTING, Phase.RUNNING))


async def test_until_wakes_on_a_change_not_on_a_timer() -> None:
    life = Lifecycle()
    flag = {"on": False}
    waiter = asyncio.create_task(life.until(lambda: flag["on"], timeout=30))
    await asyncio.sleep(0.05)
    flag["on"] = True
    assert not waiter.done()  # nothing said it changed: no polling found it
    life.changed()
    assert await asyncio.wait_for(waiter, 1)
    assert not await life.until(lambda: False, timeout=0.01)


async def test_groups_start_in_order_and_stop_in_reverse(apiserver: Any, client: Client) -> None:
    log: list[tuple[str, str, bool]] = []
    m = Manager(client, readiness_log_interval=60)
    m.add_runnable(Recorder("server", log, m), group="servers")
    m.add_runnable(Recorder("everywhere", log, m))
    m.add_runnable(Recorder("leader-only", log, m, needs_leader=True))
    assert m.runnables == ["server", "everywhere", "leader-only"]
    async with m:
        assert await m.wait_ready(5), m.readiness()
        assert await m.wait_leader(5)
    starts = [(name, cache) for what, name, cache in log if what == "start"]
    stops = [(name, cache) for what, name, cache in log if what == "stop"]
    # a server starts before the caches exist, everything else after; the leader group last
    assert starts == [("server", False), ("everywhere", True), ("leader-only", True)]
    assert [name for name, _ in stops][-1] == "server"  # the servers stop last
    assert set(name for name, _ in stops) == {"server", "everywhere", "leader-only"}


async def test_wait_ready_wakes_when_a_runnable_says_its_readiness_changed(apiserver: Any, client: Client) -> None:
    """No poll: the readiness log checks every 60 s here, yet the wait ends as soon as the runnable
    reports the change through its `Stop`."""
    log: list[tuple[str, str, bool]] = []
    m = Manager(client, readiness_log_interval=60)
    slow = Recorder("slow", log, m)
    slow.warming = True
    told: list[Stop] = []

    class Telling(Recorder):
        async def run(self, stop: Stop) -> None:
            told.append(stop)
            await super().run(stop)

    m.add_runnable(slow)
    m.add_runnable(Telling("teller", log, m))
    async with m:
        assert not await m.wait_ready(0.2)
        assert m.readiness() == ["slow: warming up"]
        waiter = asyncio.create_task(m.wait_ready(10))
        await asyncio.sleep(0.05)
        slow.warming = False
        t0 = asyncio.get_running_loop().time()
        told[0].changed()
        assert await waiter
        assert asyncio.get_running_loop().time() - t0 < 1.0


async def test_a_runnable_declares_needs_leader_itself(client: Client) -> None:
    m = Manager(client)
    with pytest.raises(TypeError, match="declares its name and needs_leader itself"):
        m.add_runnable(Recorder("r", [], m), leader_election=True)
    with pytest.raises(ValueError, match="runs in the leader group"):
        m.add_runnable(Recorder("r", [], m, needs_leader=True), group="servers")
    with pytest.raises(TypeError, match="Runnable or an async function"):
        m.add_runnable(42)  # type: ignore[arg-type]


async def test_a_failing_part_is_reported_in_one_line_and_logged_with_its_traceback(
        apiserver: Any, client: Client, caplog: pytest.LogCaptureFixture) -> None:
    """A bug in a runnable (here inside a TaskGroup of its own, the shape of the error the first
    controller run in a second event loop hit) names the error itself, not "ExceptionGroup:
    unhandled errors in a TaskGroup", and the log has the traceback that says where it was raised."""
    async def explode() -> None:
        raise RuntimeError("exploded here")

    async def boom(manager: Manager) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(explode())

    m = Manager(client)
    m.add_runnable(boom)
    record = await failed_with(m, "boom failed: RuntimeError: exploded here", caplog)
    assert record.exc_info is not None
    logged = "".join(traceback.format_exception(*record.exc_info))
    assert "in explode" in logged
    assert "unhandled errors in a TaskGroup" not in logged  # issue 31 item 14: the error, not its wrapper


async def test_several_errors_of_a_part_are_each_named(apiserver: Any, client: Client,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """Issue 31 item 14: two errors in a runnable's TaskGroup were reported as "ExceptionGroup:
    unhandled errors in a TaskGroup (2 sub-exceptions)": each is named, and each traceback logged."""
    async def first() -> None:
        await asyncio.sleep(0)
        raise ValueError("first cause")

    async def second() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:  # cleaning up after the first failed, it fails too
            raise KeyError("second cause") from None

    async def twice(manager: Manager) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(second())
            tg.create_task(first())

    m = Manager(client)
    m.add_runnable(twice)
    record = await failed_with(m, "twice failed with 2 errors: ValueError: first cause; KeyError: 'second cause'",
                               caplog)
    assert record.exc_info is not None
    logged = "".join(traceback.format_exception(*record.exc_info))
    assert "ValueError: first cause" in logged and "KeyError: 'second cause'" in logged


async def test_a_configuration_error_is_one_line_without_a_traceback(
        apiserver: Any, client: Client, caplog: pytest.LogCaptureFixture) -> None:
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        return None

    m = Manager(client)
    m.add(Controller("nowhere", for_="v1/ConfigMap", reconcile=reconcile).watches(
        "nosuch.example.com/v1/thing", lambda o: None))  # a plural that discovery cannot resolve
    record = await failed_with(m, "controller nowhere failed: ControllerError: nowhere: cannot resolve", caplog)
    assert record.exc_info is None


async def test_shutdown_does_not_wait_for_an_informer_that_never_synced(apiserver: Any, client: Client) -> None:
    """The caches stop at once even while an informer they opened still waits for its kind (a CRD
    never installed): nothing of theirs waits for a sync once asked to stop."""
    async def reconcile(req: Request, ctx: Context) -> Result | None:
        return None

    m = Manager(client, graceful_shutdown_timeout=30)
    m.add(Controller("waits", for_="nosuch.example.com/v1/Thing", reconcile=reconcile))
    await m.start()
    assert not await m.wait_ready(0.3)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await m.close()
    assert loop.time() - t0 < 5
