"""Accept negotiation and body decoding rules (sans-IO)."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.negotiation import JSON, POM, YAML, decode_yaml, go_json_error, negotiate

POM_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
POM_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_plain_and_fallback_media_types() -> None:
    assert negotiate(None, is_list=False) == JSON
    assert negotiate("application/json, */*", is_list=True) == JSON
    assert negotiate("application/yaml", is_list=False) == YAML
    assert negotiate(f"{TABLE},application/json", is_list=True) == "table"
    assert negotiate(TABLE.replace("v=v1", "v=v1beta1"), is_list=False) == "table-v1beta1"
    # a Table of a watch is not served: the next media type is
    assert negotiate(f"{TABLE},application/json", is_list=True, is_watch=True) == JSON
    assert negotiate("application/vnd.kubernetes.protobuf,application/json", is_list=False) == JSON


def test_partial_object_metadata_forms() -> None:
    assert negotiate(POM_ONE, is_list=False) == POM
    assert negotiate(POM_LIST, is_list=True) == POM
    assert negotiate(POM_ONE, is_list=True, is_watch=True) == POM
    with pytest.raises(StatusError) as e:
        negotiate(POM_ONE, is_list=True, kind="ConfigMap")
    assert e.value.code == 406 and "is a list" in e.value.message
    with pytest.raises(StatusError) as e:
        negotiate(POM_LIST, is_list=False, kind="ConfigMap")
    assert e.value.code == 406


def test_unacceptable() -> None:
    with pytest.raises(StatusError) as e:
        negotiate("text/html", is_list=False)
    assert e.value.code == 406 and e.value.details == {}


def test_go_style_json_errors() -> None:
    import orjson

    for body, want in ((b'{"a": ', "unexpected end of JSON input"), (b"{bad", "looking for beginning of object key")):
        with pytest.raises(orjson.JSONDecodeError) as e:
            orjson.loads(body)
        assert want in go_json_error(body, e.value)


_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=False)
            | st.text(max_size=20) | st.text(alphabet="ab\n\t\"\\\x7f\x85\u2028\ufffe\U0001f600", max_size=8))
_KEYS = st.text(max_size=6) | st.text("a\n", min_size=505, max_size=1100)  # YAML refuses keys over 1024 characters
_JSON_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=12)


@given(_JSON_VALUES, st.booleans())
@settings(max_examples=300, deadline=None)
def test_a_json_body_decodes_as_the_yaml_parser_reads_it(value: object, ascii_only: bool) -> None:
    """The JSON fast path of `decode_yaml` answers only what the YAML parser answers for the same bytes."""
    body = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":")).encode()
    try:
        expected = yaml.load(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # as the emulator
    except yaml.YAMLError:
        with pytest.raises(StatusError):
            decode_yaml(body)
        return
    assert decode_yaml(body) == expected
