"""Codecs: exact round-trips, compactness, dictionary learning and retraining, thread safety."""

from __future__ import annotations

import random
import tracemalloc
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.cache._codec import Codec, DictCodec, JsonCodec, ZlibDictCodec, ZstdDictCodec, make_codec

LEARNING = [ZstdDictCodec, ZlibDictCodec]  # the codecs that learn a dictionary


def configmap(i: int, text: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"cm-{i}", "namespace": f"ns-{i % 3}", "uid": f"uid-{i:08d}",
                     "resourceVersion": str(1000 + i), "labels": {"app": f"a{i % 5}"}},
        "data": {"app.properties": f"port={8000 + i}\nlevel=info\nname=cm-{i}\n{text}",
                 "unicode": "héllo wörld ✓ \u2028 \x00"},
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize("name", ["zstd", "zlib", "json", "dict"])
def test_roundtrip_through_training(name: str) -> None:
    codec = make_codec(name)
    assert isinstance(codec, Codec) and codec.name == name
    objs = [configmap(i) for i in range(40)]
    stored = [codec.encode(o) for o in objs]
    for o, s in zip(objs, stored, strict=True):
        assert codec.decode(s) == o
        assert codec.stored_size(s) > 0
    if not codec.shares_objects:
        a, b = codec.decode(stored[0]), codec.decode(stored[0])
        assert a is not b  # every decode is a fresh dict


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=4), min_size=1, max_size=8),  # > train_after
       st.sampled_from(LEARNING))
def test_dictionary_codecs_roundtrip_arbitrary_json(objs: list[dict[str, Any]], kind: type[ZstdDictCodec]) -> None:
    codec = kind(train_after=3)
    stored = [codec.encode(o) for o in objs]
    assert [codec.decode(s) for s in stored] == objs


@pytest.mark.parametrize("kind", LEARNING)
def test_a_dictionary_codec_learns_a_dictionary_and_compresses(kind: type[ZstdDictCodec]) -> None:
    codec = kind(train_after=8)
    objs = [configmap(i) for i in range(200)]
    stored = [codec.encode(o) for o in objs]
    assert codec.dictionaries == 1
    raw = sum(len(orjson.dumps(o)) for o in objs[8:])
    packed = sum(len(s) for s in stored[8:])
    assert packed < 0.35 * raw, packed / raw
    assert stored[0][0] == 0 and stored[100][0] == 2  # raw JSON before training, dictionary 0 after


@pytest.mark.parametrize("kind", LEARNING)
def test_a_dictionary_codec_retrains_when_objects_change_shape(kind: type[ZstdDictCodec]) -> None:
    codec = kind(train_after=4, check_every=16, retrain_ratio=0.3)
    first = [configmap(i) for i in range(40)]
    rng = random.Random(1)
    words = ["".join(rng.choice("qwxyzjk") for _ in range(6)) for _ in range(30)]
    other = [{"metadata": {"name": f"o-{i}"}, "spec": {"tokens": [rng.choice(words) for _ in range(60)]}}
             for i in range(80)]
    stored = [codec.encode(o) for o in first + other]
    assert codec.dictionaries >= 2
    assert [codec.decode(s) for s in stored] == first + other  # old entries keep their dictionary


@pytest.mark.parametrize("kind", LEARNING)
def test_a_dictionary_codec_stops_retraining_when_a_new_dictionary_does_not_help(kind: type[ZstdDictCodec]) -> None:
    # random payloads compress no better with any dictionary: learning one per window would only
    # pile up dictionaries (each kept for good)
    codec = kind(train_after=4, check_every=16, retrain_ratio=0.3)
    rng = random.Random(2)
    objs = [{"metadata": {"name": f"r-{i}"}, "data": {"x": rng.randbytes(300).hex()}} for i in range(400)]
    stored = [codec.encode(o) for o in objs]
    assert codec.dictionaries <= 3
    assert [codec.decode(s) for s in stored] == objs


@pytest.mark.parametrize("kind", LEARNING)
def test_preset_dictionary_and_a_foreign_form(kind: type[ZstdDictCodec]) -> None:
    codec = kind(dictionary=orjson.dumps(configmap(0)))
    s = codec.encode(configmap(1))
    assert s[0] == 2 and codec.decode(s) == configmap(1)
    assert codec.dictionary_bytes() > 0
    with pytest.raises(ValueError, match=f"not a stored form of this {codec.name} codec"):
        codec.decode(b"\x03" + s[1:])  # a dictionary this codec never learnt


def test_the_default_codec_is_smaller_than_zlib() -> None:
    objs = [configmap(i, text=random.Random(i).randbytes(200).hex()) for i in range(300)]
    sizes = {}
    for kind in LEARNING:
        codec = kind()
        sizes[kind] = sum(len(codec.encode(o)) for o in objs)
    assert sizes[ZstdDictCodec] < sizes[ZlibDictCodec], sizes


def test_zstd_decodes_while_other_threads_decode() -> None:
    # zstd runs without the GIL on contexts shared by every call: reads from threads must not
    # corrupt them
    import threading

    codec = ZstdDictCodec(train_after=4)
    objs = [configmap(i, text=random.Random(i).randbytes(2000).hex()) for i in range(60)]
    stored = [codec.encode(o) for o in objs]
    wrong: list[int] = []

    def reader() -> None:
        for _ in range(20):
            wrong.extend(i for i, s in enumerate(stored) if codec.decode(s) != objs[i])

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    more = [codec.encode(o) for o in objs * 5]  # and the loop thread keeps compressing
    for t in threads:
        t.join()
    assert wrong == []
    assert [codec.decode(s) for s in more] == objs * 5


def test_json_codec_is_exact_size() -> None:
    codec = JsonCodec()
    obj = configmap(3)
    s = codec.encode(obj)
    assert type(s) is bytes and len(s) == len(orjson.dumps(obj))


@pytest.mark.parametrize("name", ["zstd", "zlib", "json"])
def test_stored_bytes_are_exact_size(name: str) -> None:
    # orjson.dumps results keep ~8 KiB allocated whatever their length; stored ones must not
    # (the fixed per-codec state, such as zlib's primed compressor, is set up by a warm-up)
    codec = make_codec(name)
    warm = [codec.encode(configmap(i)) for i in range(50)]
    objs = [configmap(i) for i in range(50, 350)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        stored = [codec.encode(o) for o in objs]
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    payload = sum(len(s) for s in stored)
    assert (grown - payload) / len(objs) < 100, (grown, payload)
    assert len(warm) == 50


def test_dict_codec_shares() -> None:
    codec = DictCodec()
    obj = configmap(1)
    assert codec.decode(codec.encode(obj)) is obj


def test_make_codec_errors() -> None:
    with pytest.raises(ValueError, match="unknown codec 'nope'"):
        make_codec("nope")
    c = JsonCodec()
    assert make_codec(c) is c
    assert isinstance(make_codec(None), ZstdDictCodec)
    assert isinstance(make_codec("zlib"), ZlibDictCodec)
