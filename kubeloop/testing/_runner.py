"""`OperatorRunner`: run an operator module as `kubeloop run` would, inside a test (kopf's `KopfRunner`).

    async with OperatorRunner("examples/cronjob/controller.py", kubeconfig=apiserver.kubeconfig) as op:
        await client.create(...)
        await op.manager.idle()                 # the operator has caught up
    assert "started the run" in op.output      # its logs
    assert op.exception is None

Why: a test of the module as it will be deployed (its ``setup(manager)`` or ``controllers``, its
imports, its logging) catches what a test of the reconcile alone cannot. The module is loaded with
`kubeloop run`'s own code (`kubeloop.manager.load_target`/`setup_manager`), so both accept and
reject the same modules with the same messages; it runs in the test's event loop (no thread, no
subprocess), so the test can reach the Manager, and the emulator fixture's server keeps serving.
The Manager serves no probe or metrics port and runs without leader election.
"""

from __future__ import annotations

import logging
from dataclasses import KW_ONLY, dataclass, field
from types import ModuleType, TracebackType

from kubeloop.client import Client
from kubeloop.controller import RequestContextFilter
from kubeloop.manager import Manager, ManagerError, check_module, load_target, setup_manager
from kubeloop.queue import REAL_CLOCK, Clock

__all__ = ["OperatorRunner"]

_FORMAT = "%(levelname)s %(name)s: %(message)s"


class _Capture(logging.Handler):
    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.records: list[logging.LogRecord] = []
        self.addFilter(RequestContextFilter())
        self.setFormatter(logging.Formatter(_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass(eq=False, repr=False)
class OperatorRunner:
    """Run ``target`` (a file, a module name, or a module) as ``kubeloop run TARGET`` does, while the
    ``async with`` block runs; see the module docstring.

    Cluster: ``client`` (kept open), else ``kubeconfig``/``context`` (a client of its own, closed at
    the end). ``namespace`` is ``--namespace``; ``clock`` the Manager's (`VirtualClock` in tests).
    Entering returns once the operator is ready (its caches synced), raising `TimeoutError` after
    ``ready_timeout`` seconds; a module that cannot be loaded raises `kubeloop.manager.LoadError`.
    Leaving stops the operator gracefully; if it failed (a `ManagerError`), ``exception`` holds it
    and, with ``reraise`` (the default) and no other exception in flight, it is raised.

    Logs of level ``log_level`` and above from every logger (kubeloop's, the operator's own) are
    captured while it runs: ``records`` and ``output`` (one ``LEVEL logger: message`` line each).
    """

    target: str | ModuleType
    _: KW_ONLY
    client: Client | None = None
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    clock: Clock = REAL_CLOCK
    ready_timeout: float = 30.0
    log_level: int = logging.INFO
    reraise: bool = True
    module: ModuleType | None = field(default=None, init=False)
    exception: BaseException | None = field(default=None, init=False)
    _capture: _Capture = field(init=False)
    _root_level: int | None = field(default=None, init=False)
    _owned: Client | None = field(default=None, init=False)  # the client made from the kubeconfig
    _manager: Manager | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._capture = _Capture(self.log_level)

    @property
    def manager(self) -> Manager:
        """The running operator's Manager (for ``idle()``, its controllers, its cache)."""
        if self._manager is None:
            raise RuntimeError("the operator is not running: use `async with OperatorRunner(...) as op:`")
        return self._manager

    @property
    def records(self) -> list[logging.LogRecord]:
        """The log records captured so far."""
        return list(self._capture.records)

    @property
    def output(self) -> str:
        """The captured logs as text, one line per record."""
        return "".join(self._capture.format(r) + "\n" for r in self._capture.records)

    async def __aenter__(self) -> OperatorRunner:
        name = self.target if isinstance(self.target, str) else self.target.__name__
        module = load_target(self.target) if isinstance(self.target, str) else self.target
        check_module(module, name)
        self.module = module
        self._start_capture()
        try:
            client = self.client
            if client is None:
                client = self._owned = await Client.from_kubeconfig(self.kubeconfig, self.context,
                                                                    namespace=self.namespace)
            manager = Manager(client, namespace=self.namespace, clock=self.clock)
            await setup_manager(module, manager, name)
            await manager.start()
            self._manager = manager
            if not await manager.wait_ready(self.ready_timeout):
                if manager.failure is not None:  # it failed before it was ready: that error, not a timeout
                    await self._stop()
                    assert self.exception is not None
                    raise self.exception
                why = "; ".join(manager.readiness()) or "stopped"
                raise TimeoutError(f"operator {name} not ready within {self.ready_timeout}s: {why}")
        except BaseException:
            await self._stop()
            raise
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stop()
        if self.reraise and e is None and self.exception is not None:
            raise self.exception

    async def _stop(self) -> None:
        try:
            if self._manager is not None:
                try:
                    await self._manager.close()
                except ManagerError as exc:
                    self.exception = exc
        finally:
            if self._owned is not None:
                await self._owned.close()
                self._owned = None
            self._stop_capture()

    def _start_capture(self) -> None:
        root = logging.getLogger()
        root.addHandler(self._capture)
        if root.level > self._capture.level:  # the root's WARNING default would drop INFO records
            self._root_level = root.level
            root.setLevel(self._capture.level)

    def _stop_capture(self) -> None:
        root = logging.getLogger()
        root.removeHandler(self._capture)
        if self._root_level is not None:
            root.setLevel(self._root_level)
            self._root_level = None

    def __repr__(self) -> str:
        state = "running" if self._manager is not None and self._manager.state == "running" else "not running"
        return f"OperatorRunner({self.target!r}, {state})"
