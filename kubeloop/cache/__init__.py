"""kubeloop.cache: the object store, indexes, read-only views and compact codecs."""

from kubeloop.cache.codec import Codec, DictCodec, JsonCodec, ZlibDictCodec
from kubeloop.cache.frozen import FrozenDict, FrozenList, ReadOnlyError, freeze, json_default, thaw
from kubeloop.cache.index import NAMESPACE_INDEX, OWNER_INDEX, OWNER_REF_INDEX, owner_ref_key
from kubeloop.cache.store import Change, ReplaceResult, Store

__all__ = [
    "NAMESPACE_INDEX",
    "OWNER_INDEX",
    "OWNER_REF_INDEX",
    "Change",
    "Codec",
    "DictCodec",
    "FrozenDict",
    "FrozenList",
    "JsonCodec",
    "ReadOnlyError",
    "ReplaceResult",
    "Store",
    "ZlibDictCodec",
    "freeze",
    "json_default",
    "owner_ref_key",
    "thaw",
]
