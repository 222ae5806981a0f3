"""Compact in-memory representations of cached objects.

Plain Python dicts cost 5-10x the JSON they came from. A :class:`Codec` turns an
(already transformed) object into something smaller to hold and back into a
dict on read. Four are provided:

- :class:`DictCodec` (``"dict"``): keeps the dict itself; fastest reads, most memory.
- :class:`JsonCodec` (``"json"``): exact-size orjson bytes (~1.0x the JSON).
- :class:`ZstdDictCodec` (``"zstd"``, the default): zstandard with a preset dictionary built
  from the first objects the store sees. Objects of one kind share most of their text, so each
  one compresses to a fraction of its JSON while decoding stays a few microseconds.
- :class:`ZlibDictCodec` (``"zlib"``): the same with raw deflate (standard library only; slower
  and larger).

A codec instance belongs to one store (the dictionary codecs learn from its objects).

Deferred compaction: a codec may also offer ``encode_deferred(obj)`` (a cheap form that
``decode`` reads too) and ``compact(stored)`` (that form shrunk, anything else returned as is).
The store then holds a (re)list in the cheap form, so the informer is synced sooner, and the
informer compacts it afterwards in small batches (see :meth:`kubeloop.cache.Store.compact`);
large objects are compacted as they load (``kubeloop.cache._store.LOAD_COMPACT_SIZE``).
Both dictionary codecs do: their cheap form is exact-size JSON, compressed later without decoding.
"""

from __future__ import annotations

import threading
import zlib
from collections import deque
from dataclasses import InitVar, dataclass, field
from typing import Any, Protocol, runtime_checkable

import orjson

__all__ = ["CODECS", "Codec", "DictCodec", "JsonCodec", "ZlibDictCodec", "ZstdDictCodec", "make_codec"]


@runtime_checkable
class Codec(Protocol):
    """How a store holds objects: ``encode(dict) -> stored`` and ``decode(stored) -> dict``.

    ``decode`` must return a fresh dict unless ``shares_objects`` is true (then the store
    hands out read-only views of the very object it holds).
    """

    name: str
    shares_objects: bool

    def encode(self, obj: dict[str, Any]) -> Any:
        """The compact form of ``obj`` (the store keeps only this)."""
        ...

    def decode(self, stored: Any) -> dict[str, Any]:
        """The object back from its compact form."""
        ...

    def stored_size(self, stored: Any) -> int:
        """Payload bytes held for one stored object (for statistics)."""
        ...


class DictCodec:
    """Keep the decoded dict as is (no compaction)."""

    name = "dict"
    shares_objects = True

    def encode(self, obj: dict[str, Any]) -> Any:
        """The object itself."""
        return obj

    def decode(self, stored: Any) -> dict[str, Any]:
        """The object itself (read-only by contract: the store only hands out views)."""
        return stored

    def stored_size(self, stored: Any) -> int:
        """The JSON size (the in-memory size is several times larger)."""
        return len(orjson.dumps(stored))


class JsonCodec:
    """Exact-size orjson bytes.

    orjson.dumps over-allocates (its result keeps ~8 KiB whatever its length); the copy to
    an exact-size bytes object is what makes this ~1.0x the JSON.
    """

    name = "json"
    shares_objects = False

    def encode(self, obj: dict[str, Any]) -> Any:
        """Exact-size JSON bytes."""
        return bytes(memoryview(orjson.dumps(obj)))

    def decode(self, stored: Any) -> dict[str, Any]:
        """A fresh dict."""
        return orjson.loads(stored)

    def stored_size(self, stored: Any) -> int:
        """Length of the bytes."""
        return len(stored)


_TAG_RAW = 0  # b"\x00" + JSON (before a dictionary exists, and the deferred form)
_TAG_DICT0 = 2  # b"\x02" + compressed with dictionary 0, b"\x03" with dictionary 1, ...
_MAX_DICTS = 256 - _TAG_DICT0


@dataclass(slots=True, kw_only=True, eq=False)
class _LearntDictionaryCodec:
    """What both compressing codecs share: a preset dictionary learnt from the store's own objects.

    The first ``train_after`` objects are kept as JSON and serve as samples; the
    dictionary is their concatenation (most recent last), cut to ``dict_size``
    bytes. Every object after that is compressed against it. If the compression
    ratio of recent objects drifts above ``retrain_ratio`` (the objects stopped
    looking like the samples), a new dictionary is learnt from recent objects;
    older entries keep decoding with the dictionary they were written with. A new dictionary
    that did not improve the ratio (objects that do not compress better, such as random
    payloads) stops the retraining until the ratio gets worse again: each dictionary costs
    its bytes for good, and learning one per ``check_every`` objects measured 20 dictionaries
    for 10,000 such ConfigMaps. Only the newest dictionary keeps a compressor.

    A subclass says how to compress: ``_prime`` (set up for a new dictionary), ``_squeeze``
    (compress with the newest) and ``_expand`` (decompress with dictionary i).
    """

    name: str = field(default="", init=False)
    shares_objects: bool = field(default=False, init=False, repr=False)

    level: int = 1
    dict_size: int = 8192
    train_after: int = 8
    retrain_ratio: float = 0.35
    check_every: int = 512
    dictionary: InitVar[bytes | None] = None
    _dicts: list[bytes] = field(default_factory=list, init=False, repr=False)
    _recent: deque[bytes] = field(init=False, repr=False)
    _window_in: int = field(default=0, init=False, repr=False)
    _window_out: int = field(default=0, init=False, repr=False)
    _window_n: int = field(default=0, init=False, repr=False)
    # the ratio that made us learn the newest dictionary (None: it was judged already), and the
    # ratio below which we do not retrain (a dictionary learnt at it did not help)
    _trigger: float | None = field(default=None, init=False, repr=False)
    _floor: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self, dictionary: bytes | None) -> None:
        self._recent = deque(maxlen=max(1, self.train_after))
        if dictionary is not None:
            self._add_dictionary(dictionary)

    def _prime(self, zdict: bytes) -> None:
        raise NotImplementedError

    def _squeeze(self, raw: bytes | memoryview) -> bytes:
        raise NotImplementedError

    def _expand(self, i: int, body: memoryview) -> bytes:
        raise NotImplementedError

    @property
    def dictionaries(self) -> int:
        """How many dictionaries have been learnt (0 until ``train_after`` objects were seen)."""
        return len(self._dicts)

    def _add_dictionary(self, zdict: bytes) -> None:
        self._prime(zdict)
        self._dicts.append(zdict)

    def train(self, samples: list[bytes]) -> None:
        """Learn a new dictionary from JSON samples (the newest text goes last: cheapest to reach)."""
        zdict = b"".join(samples)[-self.dict_size :]
        if zdict and len(self._dicts) < _MAX_DICTS:
            self._add_dictionary(zdict)

    def encode(self, obj: dict[str, Any]) -> Any:
        """Tagged compact bytes: the cheap form, compacted at once."""
        return self.compact(self.encode_deferred(obj))

    def encode_deferred(self, obj: dict[str, Any]) -> Any:
        """The cheap form: tagged exact-size JSON (``decode`` reads it; ``compact`` compresses it later).

        A fraction of ``encode``'s cost: no compression on the list path.
        """
        return b"\x00" + orjson.dumps(obj)

    def compact(self, stored: Any) -> Any:
        """``stored`` compressed if it is in the cheap (JSON) form, else ``stored`` itself.

        Works on the JSON bytes directly (no decode). The first ``train_after`` objects a fresh
        codec sees stay JSON: they are the samples its dictionary is learnt from.
        """
        if stored[0] != _TAG_RAW:
            return stored
        raw = memoryview(stored)[1:]
        if not self._dicts:
            self._recent.append(bytes(raw))
            if len(self._recent) >= self.train_after:
                self.train(list(self._recent))
                self._recent.clear()
            return stored
        out = bytes((_TAG_DICT0 + len(self._dicts) - 1,)) + self._squeeze(raw)
        self._watch_ratio(raw, len(out))
        return out

    def _watch_ratio(self, raw: memoryview, size: int) -> None:
        if self._window_n % max(1, self.check_every // max(1, self.train_after)) == 0:
            self._recent.append(bytes(raw))  # exact size: orjson's result over-allocates
        self._window_in += len(raw)
        self._window_out += size
        self._window_n += 1
        if self._window_n >= self.check_every:
            ratio = self._window_out / max(1, self._window_in)
            if self._trigger is not None:
                if ratio > 0.9 * self._trigger:  # the newest dictionary did not help: stop here
                    self._floor = ratio
                self._trigger = None
            if ratio > self.retrain_ratio and ratio > 1.15 * self._floor:
                self.train(list(self._recent))
                self._trigger = ratio
            self._window_in = self._window_out = self._window_n = 0

    def decode(self, stored: Any) -> dict[str, Any]:
        """A fresh dict."""
        tag = stored[0]
        body = memoryview(stored)[1:]
        if tag == _TAG_RAW:
            return orjson.loads(body)
        if _TAG_DICT0 <= tag < _TAG_DICT0 + len(self._dicts):
            return orjson.loads(self._expand(tag - _TAG_DICT0, body))
        raise ValueError(f"not a stored form of this {self.name} codec (tag {tag})")

    def stored_size(self, stored: Any) -> int:
        """Length of the bytes."""
        return len(stored)

    def dictionary_bytes(self) -> int:
        """Memory held by the learnt dictionaries (shared by all objects)."""
        return sum(len(d) for d in self._dicts)


@dataclass(slots=True, kw_only=True, eq=False)
class ZstdDictCodec(_LearntDictionaryCodec):
    """Zstandard against the learnt dictionary (a raw-content one: no training step), level 1.

    The default. Against :class:`ZlibDictCodec` with the same dictionary, on the objects of
    ``benchmarks.versus`` (``benchmarks.peers.seed``, in process, 5,000 of each): a ConfigMap
    compresses in 8 us instead of 27 and decodes in 3 us instead of 7, to 0.44x of its JSON instead
    of 0.49x; a Pod in 16 us instead of 55, decodes in 6 us instead of 15, to 0.31x instead of
    0.39x. Deflate copies a primed state for every object; zstd reuses one context and codes
    literals better. A 16 KiB window (``window_log`` 14) compresses objects this size as well as
    the default 512 KiB, and a 4096-entry match table (``hash_log`` 12) as well as the default
    16384: the compressor holds ~80-100 KB instead of ~130-160 KB (deflate's primed state is
    ~137 KiB). Each learnt dictionary also keeps a decompression context, ~96 KB once used
    (retraining stops when a new dictionary does not help, so a store keeps a few). Frames are
    magicless, without checksum or dictionary id (the tag says which dictionary).

    Contexts are shared by all calls, and zstd runs without the GIL: a lock keeps a read from
    another thread from corrupting them (~0.2 us per call). ``zstandard`` is imported when the
    first dictionary is learnt, not at ``import kubeloop``.
    """

    name: str = field(default="zstd", init=False)

    window_log: int = 14
    hash_log: int = 12
    _compressor: Any = field(default=None, init=False, repr=False)
    _decompressors: list[Any] = field(default_factory=list, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _prime(self, zdict: bytes) -> None:
        import zstandard

        magicless = zstandard.FORMAT_ZSTD1_MAGICLESS
        d = zstandard.ZstdCompressionDict(zdict, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        params = zstandard.ZstdCompressionParameters.from_level(
            self.level, window_log=self.window_log, hash_log=self.hash_log, format=magicless, write_checksum=0,
            write_content_size=1, write_dict_id=0)
        with self._lock:
            self._compressor = zstandard.ZstdCompressor(dict_data=d, compression_params=params)
            self._decompressors.append(zstandard.ZstdDecompressor(dict_data=d, format=magicless))

    def _squeeze(self, raw: bytes | memoryview) -> bytes:
        with self._lock:
            out: bytes = self._compressor.compress(raw)
        return out

    def _expand(self, i: int, body: memoryview) -> bytes:
        with self._lock:
            out: bytes = self._decompressors[i].decompress(body)
        return out


@dataclass(slots=True, kw_only=True, eq=False)
class ZlibDictCodec(_LearntDictionaryCodec):
    """Raw deflate against the learnt dictionary: the standard library's alternative to the default
    :class:`ZstdDictCodec` (slower and larger, see there).

    ``level`` 1 (deflate's fast matcher): on Pods it compresses to ~0.17 of the JSON in ~17 us,
    where level 6 reaches ~0.13 in ~29 us. A 16 KiB window (``window_bits`` 14), ``mem_level`` 7
    and an 8 KiB dictionary compress as well as the 32 KiB maximums but keep deflate's state under
    glibc's mmap threshold: with the maximums every encode mapped and faulted in a fresh ~256 KiB
    state and cost ~100 us instead of ~17 us.
    """

    name: str = field(default="zlib", init=False)

    window_bits: int = 14
    mem_level: int = 7
    # a compressor primed with the newest dictionary, copied for each object
    _primed: Any = field(default=None, init=False, repr=False)

    def _prime(self, zdict: bytes) -> None:
        self._primed = zlib.compressobj(self.level, zlib.DEFLATED, -self.window_bits, self.mem_level,
                                        zlib.Z_DEFAULT_STRATEGY, zdict)

    def _squeeze(self, raw: bytes | memoryview) -> bytes:
        c = self._primed.copy()
        return c.compress(raw) + c.flush()

    def _expand(self, i: int, body: memoryview) -> bytes:
        return zlib.decompressobj(-self.window_bits, self._dicts[i]).decompress(body)


CODECS: dict[str, type[Codec]] = {"dict": DictCodec, "json": JsonCodec, "zstd": ZstdDictCodec,
                                  "zlib": ZlibDictCodec}


def make_codec(codec: Codec | str | None) -> Codec:
    """A codec from a name (``"zstd"`` default, ``"zlib"``, ``"json"``, ``"dict"``) or an instance."""
    if codec is None:
        return ZstdDictCodec()
    if isinstance(codec, str):
        try:
            return CODECS[codec]()
        except KeyError:
            raise ValueError(f"unknown codec {codec!r}: expected one of {', '.join(CODECS)}") from None
    return codec
