"""A controller as one of the Manager's runnables.

`ControllerRunnable` runs one `Controller` in its group: once the informers it ``needs`` synced, it
calls ``controller.run(...)`` with what the manager provides (``begin``: the shared cache, the
clusters' clients, the clock, and, for one that needs leadership, leader election's fence or the
sharding gate). Asked to stop, it drains: in-flight reconciles get the stop's grace (none when
leadership was lost) and are cancelled after it. Each start is a fresh run of the controller
(`kubeloop.controller.Controller.run`), so leadership can come and go.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import KW_ONLY, dataclass
from typing import Any

from kubeloop.controller import Controller
from kubeloop.manager._informers import ManagedInformer
from kubeloop.manager._runnable import Stop

__all__ = ["ControllerRunnable"]

log = logging.getLogger("kubeloop.manager")

_STOP_SLACK = 5.0  # seconds a draining controller may overrun its grace before it is cancelled

Begin = Callable[[Controller, bool], Coroutine[Any, Any, None]]
"""(controller, needs leader) -> the ``controller.run(...)`` call the manager makes."""


@dataclass(eq=False)
class ControllerRunnable:
    """One controller in a runnable group (see the module docstring)."""

    controller: Controller
    _: KW_ONLY
    needs_leader: bool
    needs: list[ManagedInformer]
    begin: Begin

    @property
    def name(self) -> str:
        return f"controller {self.controller.name}"

    async def run(self, stop: Stop) -> None:
        controller = self.controller
        async with asyncio.TaskGroup() as tg:
            running = tg.create_task(self._run(), name=self.name)
            ready = tg.create_task(self._report_ready(stop), name=f"{self.name}: readiness")
            stopping = tg.create_task(stop.wait(), name=f"{self.name}: stop")
            await asyncio.wait([running, stopping], return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
            stopping.cancel()
            if not running.done() and controller.ready:
                try:
                    await asyncio.wait_for(controller.stop(stop.grace), stop.grace + _STOP_SLACK)
                except TimeoutError:
                    log.warning("controller %s did not stop within %.1fs; cancelling it", controller.name,
                                stop.grace + _STOP_SLACK)
            running.cancel()

    async def _run(self) -> None:
        for inf in self.needs:
            await inf.wait_synced(self.controller.cache_sync_timeout)
        await self.begin(self.controller, self.needs_leader)

    async def _report_ready(self, stop: Stop) -> None:
        if await self.controller.wait_ready():
            stop.changed()

    def readiness(self) -> list[str]:
        if self.controller.ready:
            return []
        return [f"controller {self.controller.name}: starting (waiting for its caches)"]
