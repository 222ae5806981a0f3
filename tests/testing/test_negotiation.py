"""Accept negotiation and body decoding rules (sans-IO)."""

from __future__ import annotations

import pytest

from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.negotiation import JSON, POM, YAML, go_json_error, negotiate

POM_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
POM_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_plain_and_fallback_media_types() -> None:
    assert negotiate(None, is_list=False) == JSON
    assert negotiate("application/json, */*", is_list=True) == JSON
    assert negotiate("application/yaml", is_list=False) == YAML
    assert negotiate(f"{TABLE},application/json", is_list=True) == JSON  # Table is not served
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
