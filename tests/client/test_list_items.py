"""`ListItemSplitter` (sans-IO): a LIST body cut anywhere gives the items `orjson.loads` of the
whole body gives, one by one, and a malformed item a typed error after the items before it."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.client import MalformedListResponse
from kubeloop.client._list_items import ListItemSplitter


def split(body: bytes, size: int) -> tuple[list[Any], ListItemSplitter, list[int]]:
    """Feed `body` in `size`-byte chunks; the items, the splitter and how many items each feed gave."""
    s = ListItemSplitter()
    items: list[Any] = []
    per_feed = []
    for i in range(0, len(body), size):
        got = s.feed(body[i:i + size])
        per_feed.append(len(got))
        items.extend(got)
    items.extend(s.close())
    return items, s, per_feed


def cm(i: int, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": f"c{i}", "namespace": "ns", "resourceVersion": str(100 + i),
                         "labels": {"app": "x"}}, "data": {"k": f"v{i}"}, **extra}


def body(items: list[Any], *, metadata_last: bool = False, indent: bool = False) -> bytes:
    head = {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": "42"}}
    doc = ({"items": items, **head} if metadata_last else {**head, "items": items})
    return json.dumps(doc, indent=2).encode() if indent else orjson.dumps(doc)


TRICKY = [
    cm(0),
    # the separator's bytes inside strings (escaped quotes), braces and brackets in strings
    cm(1, data={"k": '},{"metadata":{"name":"fake"}}', "t": "{{ .Values }} ]] [[ {", "q": "\\\"}"}),
    # an object nested in the item that opens like an item: a StatefulSet's claim templates
    {"metadata": {"name": "s1"}, "spec": {"volumeClaimTemplates": [{"metadata": {"name": "a"}},
                                                                    {"metadata": {"name": "b"}}]}},
    cm(3, data={"unicode": "é€😀 \u2028", "empty": {}, "list": [[], [{}], [{"a": [1, 2.5e3, None, True]}]]}),
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "differently-opened"}},
    cm(5),
]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("layout", ["compact", "metadata-last", "indented"])
def test_items_equal_a_whole_decode_at_any_cut(size: int, layout: str) -> None:
    data = body(TRICKY, metadata_last=layout == "metadata-last", indent=layout == "indented")
    items, s, _ = split(data, size)
    assert items == orjson.loads(data)["items"]
    assert s.head == {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": "42"}}
    assert s.done and s.items_seen == len(TRICKY)


def test_items_come_out_as_their_bytes_arrive_and_only_the_unfinished_one_is_held() -> None:
    items = [cm(i, data={"pad": "x" * 1000}) for i in range(50)]
    data = body(items)
    got, s, per_feed = split(data, 4096)
    assert got == items
    assert sum(1 for n in per_feed if n) > 10  # spread over the feeds, not all at the end
    assert max(per_feed) <= 5

    s = ListItemSplitter()
    for i in range(0, len(data) - 2000, 4096):
        s.feed(data[i:i + 4096])
        assert s.buffered < 4096 + 1200  # the feed plus at most one unfinished item


def test_an_empty_list_and_null_items() -> None:
    assert split(body([]), 5)[0] == []
    items, s, _ = split(b'{"kind":"ConfigMapList","items":null,"metadata":{"resourceVersion":"7"}}', 3)
    assert items == [] and s.head["metadata"] == {"resourceVersion": "7"}


@pytest.mark.parametrize("size", [1, 13, 1 << 20])
def test_a_malformed_item_raises_after_the_items_before_it(size: int) -> None:
    good = body([cm(0), cm(1)])
    bad = good[:-2] + b',{"metadata":{"name":"broken",}},' + orjson.dumps(cm(3)) + b"]}"
    s = ListItemSplitter()
    got: list[Any] = []
    with pytest.raises(MalformedListResponse) as exc:
        for i in range(0, len(bad), size):
            got.extend(s.feed(bad[i:i + size]))
        got.extend(s.close())
    got.extend(s.pending)
    assert got == [cm(0), cm(1)]  # nothing lost, nothing after the fault
    assert b"broken" in exc.value.data


@pytest.mark.parametrize("data, why", [
    (b'{"kind":"ConfigMapList","items":[{"metadata":{}}', "ended"),
    (b'{"kind":"ConfigMapList","items":[{"metadata":{}}]', "ended"),
    (b'{"kind":"ConfigMapList","items":[1,2]}', "not an object"),
    (b'{"kind":"ConfigMapList","items":{}}', "not an array"),
    (b'{"kind":"ConfigMapList","items":[{"a":1} {"b":2}]}', "expected ','"),
    (b'{"items":[]} trailing', "after the list"),
    (b'[{"metadata":{}}]', "expected '{'"),
])
def test_malformed_lists_are_typed_errors(data: bytes, why: str) -> None:
    with pytest.raises(MalformedListResponse, match=why):
        split(data, 4)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
objects = st.dictionaries(st.sampled_from(["metadata", "apiVersion", "spec", "data", "a"]), json_values,
                          min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(items=st.lists(objects, max_size=8), size=st.integers(1, 200), indent=st.booleans(),
       metadata_last=st.booleans())
def test_any_list_of_objects_round_trips(items: list[dict[str, Any]], size: int, indent: bool,
                                         metadata_last: bool) -> None:
    data = body(items, metadata_last=metadata_last, indent=indent)
    assert split(data, size)[0] == orjson.loads(data)["items"]
