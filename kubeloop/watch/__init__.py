"""kubeloop.watch: the list+watch state machine (sans-IO) and its asyncio driver.

Internal modules are private (`_name.py`); import everything from `kubeloop.watch`.

- `WatchMachine` (_machine.py): pure state machine whose state is one `Phase` value (_phases.py:
  `Relist`, `Listing`, `Streaming`, `Rewatch`, `Watching`, `BackingOff`, `Stopped`) carrying its
  data; watch events in (`kubeloop.client.WatchEvent`, or anything `EventLike`), `List`/`Watch`/
  `Sleep` actions (_actions.py) and the outputs `Init`/`InitApply`/`InitDone`/`Apply`/`Delete`
  (_outputs.py) out; `state`, `last_error`, `counters`, `synced`, `resource_version`,
  `describe()` for metrics and readiness.
- `Watcher` (_watcher.py): runs the machine against a `WatchSource` (_source.py) in the consumer's
  own task: `async for event in watcher.events()`, `await watcher.run(callback)`, or
  `watcher.event_batches()` (the same events in lists, for bulk consumers); `stop()`, `wake()`.
- The adapter from `kubeloop.client` to a `WatchSource` is `kubeloop.cache.ClientSource`.
- `WatchConfig`/`ListSemantic` (_config.py; the backoff is `kubeloop.meta.Backoff`),
  `WatchError`/`ErrorKind`/`classify_exception`/`classify_status` (_errors.py).
"""

from kubeloop.watch._actions import Action, List, Sleep, Watch
from kubeloop.watch._config import ListSemantic, WatchConfig
from kubeloop.watch._errors import ErrorKind, WatchError, classify_exception, classify_status
from kubeloop.watch._machine import ProtocolError, WatchCounters, WatchMachine
from kubeloop.watch._outputs import INIT, Apply, Delete, Init, InitApply, InitDone, WatcherEvent
from kubeloop.watch._phases import (
    BackingOff,
    Listing,
    Phase,
    Relist,
    Rewatch,
    Stopped,
    Streaming,
    Watching,
    WatchState,
)
from kubeloop.watch._source import CONNECTED, EventLike, ListPage, WatchSource
from kubeloop.watch._watcher import Watcher

__all__ = [
    "CONNECTED",
    "INIT",
    "Action",
    "Apply",
    "BackingOff",
    "Delete",
    "ErrorKind",
    "EventLike",
    "Init",
    "InitApply",
    "InitDone",
    "List",
    "ListPage",
    "ListSemantic",
    "Listing",
    "Phase",
    "ProtocolError",
    "Relist",
    "Rewatch",
    "Sleep",
    "Stopped",
    "Streaming",
    "Watch",
    "WatchConfig",
    "WatchCounters",
    "WatchError",
    "WatchMachine",
    "WatchSource",
    "WatchState",
    "Watcher",
    "WatcherEvent",
    "Watching",
    "classify_exception",
    "classify_status",
]
