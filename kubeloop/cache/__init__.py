"""kubeloop.cache: the object store, indexes, read-only views, compact codecs, informers and the
shared cache.

- `Store` (store.py), indexes (index.py), read-only views (frozen.py), codecs (codec.py).
- `Informer` (informer.py): watcher -> transform -> filter -> store -> subscribers.
- `Subscription` / `Event` (subscription.py, events.py): per-subscriber bounded, ordered events.
- `SharedCache` / `InformerHandle` (shared.py): one informer per scope, shared and ref-counted.
- `Scope` (scope.py), `CacheReader` (reader.py), transforms (transform.py), `ClientSource` (source.py).
"""

from kubeloop.cache.codec import Codec, DictCodec, JsonCodec, ZlibDictCodec
from kubeloop.cache.events import Event
from kubeloop.cache.frozen import FrozenDict, FrozenList, ReadOnlyError, freeze, json_default, thaw
from kubeloop.cache.index import NAMESPACE_INDEX, OWNER_INDEX, OWNER_REF_INDEX, owner_ref_key
from kubeloop.cache.informer import Informer, InformerNotReady
from kubeloop.cache.reader import CacheReader
from kubeloop.cache.scope import Scope
from kubeloop.cache.shared import InformerHandle, SharedCache
from kubeloop.cache.source import ClientSource
from kubeloop.cache.store import Change, ReplaceResult, Store
from kubeloop.cache.subscription import Subscription, SubscriptionClosed
from kubeloop.cache.transform import DEFAULT, compose, drop_annotations, drop_fields, strip_managed_fields

__all__ = [
    "DEFAULT",
    "NAMESPACE_INDEX",
    "OWNER_INDEX",
    "OWNER_REF_INDEX",
    "CacheReader",
    "Change",
    "ClientSource",
    "Codec",
    "DictCodec",
    "Event",
    "FrozenDict",
    "FrozenList",
    "Informer",
    "InformerHandle",
    "InformerNotReady",
    "JsonCodec",
    "ReadOnlyError",
    "ReplaceResult",
    "Scope",
    "SharedCache",
    "Store",
    "Subscription",
    "SubscriptionClosed",
    "ZlibDictCodec",
    "compose",
    "drop_annotations",
    "drop_fields",
    "freeze",
    "json_default",
    "owner_ref_key",
    "strip_managed_fields",
    "thaw",
]
