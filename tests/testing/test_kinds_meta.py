"""ObjectMeta rules and typed decoding of built-in kinds (kube-apiserver 1.24 messages)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop import meta as kv
from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.kinds import meta as m
from kubeloop.testing.apiserver.kinds.batch import JobStrategy
from kubeloop.testing.apiserver.kinds.schema import (
    INT32,
    MICROTIME,
    STRING,
    TIME,
    decode_object,
    format_micro_time,
    map_of,
    parse_time,
    struct,
    top_level,
)
from kubeloop.testing.apiserver.objectmeta import generate_name
from kubeloop.testing.apiserver.resources import ServedResource


def test_generate_name_truncates_to_63() -> None:
    name = generate_name("x" * 70)
    assert len(name) == 63 and name.startswith("x" * 58)
    short = generate_name("pre-")
    assert len(short) == 9 and short.startswith("pre-") and short[4:].isalnum()


def test_generate_name_prefix_masks_trailing_dash() -> None:
    assert m.name_is_dns_subdomain("pre-", True) == []
    assert m.name_is_dns_subdomain("pre-", False) == [kv.DNS1123_SUBDOMAIN_MSG]


def test_validate_object_meta_causes() -> None:
    causes = m.validate_object_meta({"name": "c", "namespace": "ns", "labels": {"bad key": "x"}}, True)
    assert [(c["field"], c["reason"]) for c in causes] == [("metadata.labels", "FieldValueInvalid")]
    assert causes[0]["message"].startswith('Invalid value: "bad key": name part must consist')
    causes = m.validate_object_meta({}, True)
    assert {(c["field"], c["message"]) for c in causes} == {
        ("metadata.name", "Required value: name or generateName is required"),
        ("metadata.namespace", "Required value")}
    causes = m.validate_object_meta({"name": "n", "namespace": "x"}, False)
    assert causes == [m.forbidden_cause("metadata.namespace", "not allowed on this type")]
    causes = m.validate_object_meta({"generateName": "Bad_", "name": "Bad_abcde", "namespace": "n"}, True)
    assert sorted(c["field"] for c in causes) == ["metadata.generateName", "metadata.name"]
    causes = m.validate_object_meta({"name": "n", "finalizers": ["orphan", "foregroundDeletion"]}, False)
    assert causes[0]["field"] == "metadata.finalizers"


def test_plain_strategy_validates_object_meta() -> None:
    """The base Strategy (a resource with no kind-specific rules) applies the generic ObjectMeta rules."""
    info = ServedResource("example.com", "v1", "widgets", "Widget", True)
    info.strategy.validate_create(info, {"metadata": {"name": "ok", "namespace": "n"}})
    with pytest.raises(StatusError) as exc:
        info.strategy.validate_create(info, {"metadata": {"name": "Bad_Name", "namespace": "n"}})
    assert exc.value.code == 422 and exc.value.status()["details"]["group"] == "example.com"
    assert exc.value.status()["details"]["causes"][0]["message"].endswith(kv.DNS1123_SUBDOMAIN_MSG)
    old = {"metadata": {"name": "ok", "namespace": "n", "uid": "u"}}
    with pytest.raises(StatusError):
        info.strategy.validate_update(info, {"metadata": {"name": "ok", "namespace": "n", "uid": "v"}}, old)


def test_validate_object_meta_update() -> None:
    old = {"name": "a", "namespace": "n", "uid": "u", "deletionTimestamp": "t", "finalizers": ["x/a"]}
    new = dict(old, finalizers=["x/a", "example.com/g"], name="b")
    causes = m.validate_object_meta_update(new, old)
    by_field = {c["field"]: c for c in causes}
    assert by_field["metadata.finalizers"]["message"] == (
        'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers '
        '[]string{"example.com/g"}')
    assert by_field["metadata.name"]["message"] == 'Invalid value: "b": field is immutable'


def test_go_repr() -> None:
    assert m.go_repr({"app": "bad"}) == 'map[string]string{"app":"bad"}'
    assert m.go_repr(["a"]) == '[]string{"a"}'
    assert m.go_repr(0) == "0" and m.go_repr("x") == '"x"'


CM = top_level("ConfigMap", data=map_of(STRING), spec=struct("Spec", n=INT32, t=TIME, mt=MICROTIME))


def _decode(obj: dict) -> dict:
    decode_object(CM, obj, "ConfigMap", "v1")
    return obj


def test_decode_rejects_wrong_types_with_400() -> None:
    with pytest.raises(StatusError) as e:
        _decode({"data": {"a": 1}})
    assert e.value.code == 400 and e.value.reason == "BadRequest"
    assert e.value.message == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
                               "number into Go struct field ConfigMap.data of type string")
    with pytest.raises(StatusError) as e:
        _decode({"metadata": {"labels": {"a": True}}})
    assert "Go struct field ObjectMeta.metadata.labels of type string" in e.value.message
    with pytest.raises(StatusError) as e:
        _decode({"spec": {"n": 1.5}})
    assert "number 1.5 into Go struct field Spec.spec.n of type int32" in e.value.message


def test_decode_prunes_unknown_fields_and_nulls() -> None:
    obj = _decode({"apiVersion": "v1", "junk": 1, "data": {"a": "b"}, "metadata": {"name": "x", "other": 1},
                   "spec": None})
    assert obj == {"apiVersion": "v1", "data": {"a": "b"}, "metadata": {"name": "x"}}


def test_micro_time_needs_six_digits_and_converts_to_utc() -> None:
    assert _decode({"spec": {"mt": "2024-01-01T01:00:00.000000+01:00"}})["spec"]["mt"] == "2024-01-01T00:00:00.000000Z"
    for bad, rest in (("2024-01-01T00:00:00Z", "Z"), ("2024-01-01T00:00:00.5Z", ".5Z")):
        with pytest.raises(StatusError) as e:
            _decode({"spec": {"mt": bad}})
        assert e.value.code == 400
        assert e.value.message.endswith(
            f'parsing time "{bad}" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "{rest}" as ".000000"')


def test_time_drops_fraction_and_offset() -> None:
    assert _decode({"spec": {"t": "2024-01-01T02:00:00.5+02:00"}})["spec"]["t"] == "2024-01-01T00:00:00Z"
    assert format_micro_time(parse_time("2024-01-01T00:00:05.123456Z", True)) == "2024-01-01T00:00:05.123456Z"
    for bad in ("yesterday", "2024-01-01T00:00:00Z\n"):
        with pytest.raises(StatusError):
            _decode({"spec": {"t": bad}})


@given(st.lists(st.text(alphabet="ab.-_ \n/%Z9", max_size=6), max_size=5))
def test_config_keys_fast_path_agrees(keys: list[str]) -> None:
    assert kv.config_keys_ok(keys) == all(kv.is_config_key(k) == [] for k in keys)


def test_a_value_decoded_before_decodes_the_same_and_a_lookalike_is_still_checked() -> None:
    """Updates skip decoding a spec that decoded to itself before; the skip must be invisible."""
    job = JobStrategy.schema
    assert job is not None
    spec = {"parallelism": 1, "template": {"spec": {"containers": [{"name": "a", "image": "i"}]}}}
    first = {"spec": spec}
    decode_object(job, first, "Job", "v1")
    again = {"spec": {"parallelism": 1, "template": {"spec": {"containers": [{"name": "a", "image": "i"}]}}}}
    decode_object(job, again, "Job", "v1")
    assert again == first
    for bad in (True, 1.0, "1"):  # equal to 1 for Python, not for Go's decoder
        with pytest.raises(StatusError, match="cannot unmarshal"):
            decode_object(job, {"spec": dict(spec, parallelism=bad)}, "Job", "v1")
    stamped = {"status": {"startTime": "2026-01-01T01:00:00+01:00"}}  # decoding changes it: never skipped
    for _ in range(2):
        decoded = {"status": dict(stamped["status"])}
        decode_object(job, decoded, "Job", "v1")
        assert decoded["status"]["startTime"] == "2026-01-01T00:00:00Z"
