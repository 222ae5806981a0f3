"""`gostruct.py`: Go's `%#v` of typed API values and `field.Error`'s value rendering. The expected
texts are messages kube-apiserver 1.24 answered (the differential recording has them in context)."""

from __future__ import annotations

from kubeloop.testing.apiserver import gostruct
from kubeloop.testing.apiserver.kinds import cron


def test_internal_struct_with_nil_pointer() -> None:
    go = gostruct.internal("apps", "DaemonSetUpdateStrategy")
    assert gostruct.sprint(go, {"type": "Sideways"}) == (
        'apps.DaemonSetUpdateStrategy{Type:"Sideways", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}')


def test_label_selector_with_a_map_and_a_nil_slice() -> None:
    go = "*k8s.io/apimachinery/pkg/apis/meta/v1.LabelSelector"
    assert gostruct.field_value(go, {"matchLabels": {"x": "y", "app": "d"}}) == (
        'v1.LabelSelector{MatchLabels:map[string]string{"app":"d", "x":"y"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}")


def test_int_or_string_prints_its_fields() -> None:
    assert gostruct.field_value("k8s.io/apimachinery/pkg/util/intstr.IntOrString", "150%") == (
        'intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}')


def test_nil_pointer_is_the_string_null() -> None:
    assert gostruct.field_value("*k8s.io/apimachinery/pkg/apis/meta/v1.LabelSelector", None) == '"null"'
    assert gostruct.field_value("*int32", 5) == "5"
    assert gostruct.field_value("[]string", ["a"]) == '[]string{"a"}'


def test_go_json_orders_struct_fields_and_sorts_decoded_maps() -> None:
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "data": {"z": "1", "num": 1},
          "metadata": {"labels": {"b": "1", "a": "2"}, "uid": "u", "name": "c"}}
    go = gostruct.versioned("", "v1", "ConfigMap")
    # untouched: the typed encoder's order (TypeMeta, metadata as ObjectMeta declares its fields)
    assert gostruct.go_json(go, cm) == (
        '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","uid":"u","labels":{"a":"2","b":"1"}},'
        '"data":{"num":1,"z":"1"}}')
    # the root and `data` decoded by a JSON patch: their keys sorted, `metadata` still raw
    assert gostruct.go_json(go, cm, frozenset({(), ("data",)})) == (
        '{"apiVersion":"v1","data":{"num":1,"z":"1"},"kind":"ConfigMap","metadata":{"name":"c","uid":"u",'
        '"labels":{"a":"2","b":"1"}}}')


def test_cron_errors_are_robfig_s() -> None:
    def error(spec: str) -> str:
        try:
            cron.parse_standard(spec)
        except cron.CronError as e:
            return str(e)
        return ""

    assert error("*/5 * * * *") == ""
    assert error("every minute") == "expected exactly 5 fields, found 2: [every minute]"
    assert error("61 * * * *") == "end of range (61) above maximum (59): 61"
    assert error("@every 5") == 'failed to parse duration @every 5: time: missing unit in duration "5"'
    assert error("-1 * * * *") == 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'
    assert error("TZ=Foo/Bar * * * * *") == "provided bad location Foo/Bar: unknown time zone Foo/Bar"
