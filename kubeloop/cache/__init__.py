"""kubeloop.cache: the object store, indexes, read-only views, compact codecs, informers and the
shared cache.

The modules are private (``_name.py``); every public name is exported here.

- `Store` (_store.py, _entry.py), indexes (_index.py), read-only views (_frozen.py), codecs (_codec.py).
- `Informer` (_informer.py): watcher -> transform -> filter -> store -> subscribers, made of
  `StoreWriter` and `BrokenObjects` (_writer.py: the store's one writer, relists swapped in under
  its readers), `Compactor` (_compactor.py) and `SyncGate` (_sync_gate.py).
- `Subscription` / `Event` (_subscription.py, _informer_event.py): per-subscriber bounded, ordered events.
- `SharedCache` / `InformerHandle` (_shared.py, _handle.py): one informer per scope, shared and ref-counted.
- `Reader` (_reader.py): the one read interface (get, list, keys, by_index, index_keys, values) of
  `Store`, `CacheReader`, `InformerHandle`, the manager's informers and ``ctx.reader()``.
- `Scope` / `Selection` (_scope.py): what an informer keeps, the shared cache's key;
  `CacheReader` (_reader.py), transforms (_transform.py), `ClientSource` (_source.py).
"""

from typing import TYPE_CHECKING

from kubeloop.cache._codec import Codec, DictCodec, JsonCodec, ZlibDictCodec, ZstdDictCodec
from kubeloop.cache._compactor import Compactor
from kubeloop.cache._entry import Change, Key, ReplaceResult
from kubeloop.cache._frozen import (
    FrozenDict,
    FrozenList,
    MetadataOnlyError,
    ReadOnlyError,
    freeze,
    json_default,
    thaw,
    to_builtin,
)
from kubeloop.cache._handle import InformerHandle
from kubeloop.cache._index import (
    NAMESPACE_INDEX,
    OWNER_INDEX,
    OWNER_REF_INDEX,
    IndexFunc,
    owner_ref_index,
    owner_ref_key,
    owner_uid_index,
)
from kubeloop.cache._informer import CacheNotSynced, Informer, InformerNotReady
from kubeloop.cache._informer_event import Event
from kubeloop.cache._reader import CacheReader, Reader
from kubeloop.cache._scope import Scope, Selection, SelectionKeywords
from kubeloop.cache._shared import SharedCache
from kubeloop.cache._source import ClientSource
from kubeloop.cache._store import Store
from kubeloop.cache._subscription import Subscription, SubscriptionClosed
from kubeloop.cache._sync_gate import SyncGate
from kubeloop.cache._transform import (
    DEFAULT_TRANSFORM,
    Filter,
    Transform,
    compose,
    drop_annotations,
    drop_fields,
    strip_managed_fields,
)
from kubeloop.cache._values import ValueFunc, ValueIndex
from kubeloop.cache._writer import BrokenObjects, StoreWriter

__all__ = [
    "DEFAULT_TRANSFORM",
    "NAMESPACE_INDEX",
    "OWNER_INDEX",
    "OWNER_REF_INDEX",
    "BrokenObjects",
    "CacheNotSynced",
    "CacheReader",
    "Change",
    "ClientSource",
    "Codec",
    "Compactor",
    "DictCodec",
    "Event",
    "Filter",
    "FrozenDict",
    "FrozenList",
    "IndexFunc",
    "Informer",
    "InformerHandle",
    "InformerNotReady",
    "JsonCodec",
    "Key",
    "MetadataOnlyError",
    "ReadOnlyError",
    "Reader",
    "ReplaceResult",
    "Scope",
    "Selection",
    "SelectionKeywords",
    "SharedCache",
    "Store",
    "StoreWriter",
    "Subscription",
    "SubscriptionClosed",
    "SyncGate",
    "Transform",
    "ValueFunc",
    "ValueIndex",
    "ZlibDictCodec",
    "ZstdDictCodec",
    "compose",
    "drop_annotations",
    "drop_fields",
    "freeze",
    "json_default",
    "owner_ref_index",
    "owner_ref_key",
    "owner_uid_index",
    "strip_managed_fields",
    "thaw",
    "to_builtin",
]

if TYPE_CHECKING:  # every read-only front conforms to `Reader` (checked by mypy)

    def _fronts(s: Store, r: CacheReader, h: InformerHandle) -> list[Reader]:
        return [s, r, h]
