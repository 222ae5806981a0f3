"""kubeloop.watch: the list+watch state machine (sans-IO) and its asyncio driver.

- `WatchMachine` (machine.py): pure state machine; inputs in, `List`/`Watch`/`Sleep` actions and
  `Init`/`InitApply`/`InitDone`/`Apply`/`Delete` events (events.py) out; `state`, `last_error`,
  `counters`, `synced`, `resource_version`, `describe()` for metrics and readiness.
- `Watcher` (watcher.py): runs the machine against a `WatchSource` (source.py) in the consumer's
  own task: `async for event in watcher.events()` or `await watcher.run(callback)`; `stop()`,
  `wake()`.
- The adapter from `kubeloop.client` to a `WatchSource` is `kubeloop.cache.ClientSource`.
- `Backoff` (backoff.py), `WatchConfig`/`ListSemantic` (config.py), `WatchError`/`ErrorKind`/
  `classify_exception`/`classify_status` (errors.py).
"""

from kubeloop.watch.actions import Action, List, Sleep, Watch
from kubeloop.watch.backoff import Backoff
from kubeloop.watch.config import ListSemantic, WatchConfig
from kubeloop.watch.errors import ErrorKind, WatchError, classify_exception, classify_status
from kubeloop.watch.events import INIT, Apply, Delete, Init, InitApply, InitDone, WatchEvent
from kubeloop.watch.machine import ProtocolError, WatchCounters, WatchMachine, WatchState
from kubeloop.watch.source import ListPage, RawEvent, WatchSource
from kubeloop.watch.watcher import Watcher

__all__ = [
    "INIT",
    "Action",
    "Apply",
    "Backoff",
    "Delete",
    "ErrorKind",
    "Init",
    "InitApply",
    "InitDone",
    "List",
    "ListPage",
    "ListSemantic",
    "ProtocolError",
    "RawEvent",
    "Sleep",
    "Watch",
    "WatchConfig",
    "WatchCounters",
    "WatchError",
    "WatchEvent",
    "WatchMachine",
    "WatchSource",
    "WatchState",
    "Watcher",
    "classify_exception",
    "classify_status",
]
