"""`semantically_equal` and `go_json_numbers`: JSON values as kube-apiserver (Go) sees them."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.meta import go_json_numbers, semantically_equal


@pytest.mark.parametrize(("a", "b"), [
    (1, 1.0),  # int64 vs float64: a spec change on the API server, although 1 == 1.0 in Python
    (True, 1),
    (False, 0),
    (0, 0.0),
    ({"a": None}, {}),  # a null is a value
    ([1, 2], [2, 1]),
    ({"a": 1}, {"a": 1.0}),
    ([{"x": True}], [{"x": 1}]),
    ("1", 1),
    ({"a": 1}, [("a", 1)]),
    ([], {}),
    ("ab", ["a", "b"]),
])
def test_values_python_calls_equal_or_alike_differ(a: Any, b: Any) -> None:
    assert not semantically_equal(a, b)
    assert not semantically_equal(b, a)


@pytest.mark.parametrize(("a", "b"), [
    (1, 1),
    (1.5, 1.5),
    (None, None),
    ({"a": [1, {"b": "c"}]}, MappingProxyType({"a": (1, MappingProxyType({"b": "c"}))})),  # read-only views
    (2**70, float(2**70)),  # past int64 the server decodes an integer literal as float64 too
    ({"b": 1, "a": 2}, {"a": 2, "b": 1}),  # key order does not matter
    (True, True),
])
def test_values_the_server_sees_as_equal(a: Any, b: Any) -> None:
    assert semantically_equal(a, b)
    assert semantically_equal(b, a)


def test_integral_floats_are_written_as_go_writes_them() -> None:
    value = {"weight": 1.0, "ratio": 0.5, "big": 1e21, "n": [2.0, 3, True, {"x": -0.0}], "s": "1.0"}
    out = go_json_numbers(value)
    assert orjson.dumps(out) == b'{"weight":1,"ratio":0.5,"big":1e+21,"n":[2,3,true,{"x":0}],"s":"1.0"}'
    assert value["weight"] == 1.0 and type(value["weight"]) is float  # the input is not changed
    # past int64 a number is a float64 however Go writes it, and orjson writes no integer past 64 bits
    out = go_json_numbers([2.0**64, -(2.0**63), 2.0**63])
    assert orjson.dumps(out) == b"[1.8446744073709552e+19,-9223372036854775808,9.223372036854776e+18]"
    same = {"a": [1, "x"], "b": 0.5}
    assert go_json_numbers(same) is same  # nothing to change: nothing copied


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False, width=64),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_a_value_equals_itself_after_a_round_trip_through_go_numbers(value: Any) -> None:
    # what a typed model writes back (integral floats as ints) is what the server stored and sent
    sent = orjson.loads(orjson.dumps(go_json_numbers(value)))
    assert semantically_equal(sent, go_json_numbers(value))
    assert semantically_equal(value, value)
    assert semantically_equal(go_json_numbers(sent), sent)
