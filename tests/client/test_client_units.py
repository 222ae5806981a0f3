"""Sans-IO parts of the client: errors, line splitting, event decoding, rate limit, retry policy,
resource refs, discovery parsing and serialization."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeloop.client import (
    AlreadyExists,
    ApiError,
    ApiResource,
    Conflict,
    Expired,
    Gone,
    InternalError,
    Invalid,
    MalformedWatchLine,
    NotFound,
    ResourceRef,
    ServerTimeout,
    Timeout,
    TooManyRequests,
    Unauthorized,
    WatchEvent,
    dumps,
    error_from_status,
    format_field_selector,
    format_label_selector,
)
from kubeloop.client._errors import error_from_response
from kubeloop.client._jsonlines import LineSplitter
from kubeloop.client._mapper import parse_resource_list
from kubeloop.client._retry import (
    RetryPolicy,
    parse_retry_after,
    should_retry_connection_error,
    should_retry_status,
)
from kubeloop.client._watch_event import decode_event


def status(code: int, reason: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
            "message": f"{reason} happened", **extra}


@pytest.mark.parametrize(("code", "reason", "cls"), [
    (404, "NotFound", NotFound), (409, "AlreadyExists", AlreadyExists), (409, "Conflict", Conflict),
    (410, "Expired", Gone), (410, "Gone", Expired), (429, "TooManyRequests", TooManyRequests),
    (500, "ServerTimeout", ServerTimeout), (504, "Timeout", Timeout), (401, "Unauthorized", Unauthorized),
    (500, "InternalError", InternalError), (500, "", InternalError), (502, "", InternalError),
])
def test_error_class_by_reason_then_code(code: int, reason: str, cls: type[ApiError]) -> None:
    err = error_from_response(code, orjson.dumps(status(code, reason)))
    assert type(err) is cls
    assert err.code == code and err.reason == reason
    assert err.status["message"] == f"{reason} happened"


def test_invalid_causes_and_retry_after() -> None:
    causes = [{"reason": "FieldValueRequired", "message": "Required value", "field": "metadata.name"}]
    err = error_from_status(status(422, "Invalid", details={"causes": causes, "retryAfterSeconds": 3}))
    assert isinstance(err, Invalid)
    assert err.causes == causes
    assert err.retry_after == 3.0


def test_non_status_body_becomes_status() -> None:
    err = error_from_response(404, b"404 page not found\n")
    assert isinstance(err, NotFound)
    assert err.message == "404 page not found"
    assert err.status["kind"] == "Status"
    assert str(err) == "404 NotFound: 404 page not found"


def test_error_event_helper() -> None:
    ev = decode_event(orjson.dumps({"type": "ERROR", "object": status(410, "Expired")}))
    assert ev.type == "ERROR"
    assert isinstance(ev.error(), Gone)
    assert decode_event(b'{"type":"ADDED","object":{"metadata":{"resourceVersion":"7"}}}').error() is None


def test_decode_event() -> None:
    ev = decode_event(b'{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"42"}}}')
    assert isinstance(ev, WatchEvent)
    assert (ev.type, ev.resource_version) == ("BOOKMARK", "42")
    assert ev.raw.startswith(b'{"type"')


@pytest.mark.parametrize("line", [
    b"{not json", b'{"type":"ADDED"}', b'{"object":{}}', b'{"type":"NOPE","object":{}}',
    b'{"type":"ADDED","object":[1]}', b"[1,2]", b"   ",
])
def test_decode_event_malformed(line: bytes) -> None:
    with pytest.raises(MalformedWatchLine):
        decode_event(line)


def test_line_splitter_basic() -> None:
    s = LineSplitter()
    assert s.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert s.pending() == 4
    assert s.feed(b":2}\n\n") == [b'{"b":2}']
    assert s.feed(b"") == []
    assert s.feed(b"tail") == []
    assert s.flush() == b"tail"
    assert s.flush() is None


def test_line_splitter_huge_line_has_no_cap() -> None:
    s = LineSplitter()
    big = b"x" * (5 * 2**20)
    for i in range(0, len(big), 65536):
        assert s.feed(big[i:i + 65536]) == []
    assert s.feed(b"\nnext") == [big]
    assert s.pending() == 4  # only the unfinished line is kept


@given(st.lists(st.binary(min_size=1, max_size=30).map(lambda b: b.replace(b"\n", b"")).filter(bool), max_size=20),
       st.lists(st.integers(min_value=0, max_value=400), max_size=10))
def test_line_splitter_any_chunking(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    s = LineSplitter()
    out: list[bytes] = []
    for a, b in itertools.pairwise(points):
        out.extend(s.feed(stream[a:b]))
    assert out == lines
    assert s.flush() is None


def test_retry_rules() -> None:
    assert should_retry_status("POST", 429) and should_retry_status("GET", 429)
    assert should_retry_status("GET", 500) and should_retry_status("GET", 503)
    assert not should_retry_status("POST", 500)
    assert not should_retry_status("PATCH", 503)
    assert not should_retry_status("PUT", 500)
    assert not should_retry_status("GET", 404)
    assert should_retry_connection_error("POST", connected=False)
    assert not should_retry_connection_error("POST", connected=True)
    assert should_retry_connection_error("GET", connected=True)
    assert parse_retry_after("2") == 2.0 and parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_retry_delays_are_bounded_and_jittered() -> None:
    p = RetryPolicy(base_delay=0.1, max_delay=1.0, max_retry_after=5)
    rnd = random.Random(1)
    for attempt in range(1, 12):
        d = p.delay(attempt, rnd=rnd)
        cap = min(1.0, 0.1 * 2 ** (attempt - 1))
        assert cap / 2 <= d <= cap
    assert p.delay(1, retry_after=3) == 3
    assert p.delay(1, retry_after=60) == 5


def test_resource_ref() -> None:
    assert ResourceRef.parse("v1/ConfigMap") == ResourceRef("", "v1", "ConfigMap")
    assert ResourceRef.parse("apps/v1/Deployment").api_version == "apps/v1"
    assert str(ResourceRef.parse("example.com/v1/Widget")) == "example.com/v1/Widget"
    assert ResourceRef.of({"apiVersion": "apps/v1", "kind": "Deployment"}) == ResourceRef("apps", "v1", "Deployment")
    for bad in ("ConfigMap", "a/b/c/d", "/v1/X", ""):
        with pytest.raises(ValueError):
            ResourceRef.parse(bad)
    assert ResourceRef.parse("v1beta1/Thing") == ResourceRef("", "v1beta1", "Thing")


def test_a_resource_without_its_version_says_so() -> None:
    """Issue 11 item 14: "batch/Job" is a group without a version, not the core group's "batch"."""
    with pytest.raises(ValueError, match=r"'batch/Job' has no version: .*'batch/v1/Job'"):
        ResourceRef.parse("batch/Job")


def test_parse_resource_list_and_paths() -> None:
    body = {"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
        {"name": "deployments", "singularName": "deployment", "namespaced": True, "kind": "Deployment",
         "verbs": ["get", "list"], "shortNames": ["deploy"]},
        {"name": "deployments/status", "namespaced": True, "kind": "Deployment", "verbs": ["get", "patch"]},
        {"name": "deployments/scale", "namespaced": True, "group": "autoscaling", "version": "v1", "kind": "Scale"},
    ]}
    res = parse_resource_list("apps", "v1", body)
    d = res["deployments"]
    assert isinstance(d, ApiResource)
    assert d.subresources == {"status", "scale"} and d.namespaced and d.kind == "Deployment"
    assert d.path("ns", "web", "status") == "/apis/apps/v1/namespaces/ns/deployments/web/status"
    assert d.path(None) == "/apis/apps/v1/deployments"
    core = ApiResource("", "v1", "Namespace", "namespaces", namespaced=False)
    assert core.path("ignored", "kube-system") == "/api/v1/namespaces/kube-system"


class View(Mapping[str, Any]):
    """A read-only mapping that is not a dict (like the cache's views)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._d = data

    def __getitem__(self, k: str) -> Any:
        v = self._d[k]
        return View(v) if isinstance(v, dict) else tuple(v) if isinstance(v, list) else v

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)


def test_dumps_accepts_mapping_views() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "finalizers": ["x/y"]},
           "data": {"k": "v"}}
    assert orjson.loads(dumps(View(obj))) == obj


def test_selector_formatting() -> None:
    assert format_label_selector(None) is None
    assert format_label_selector("app=web,tier!=db") == "app=web,tier!=db"
    assert format_label_selector({"app": "web", "tier": "db"}) == "app=web,tier=db"
    assert format_field_selector({"metadata.name": "a,b=c"}) == r"metadata.name=a\,b\=c"

    class Sel:
        def __str__(self) -> str:
            return "x in (a,b)"
    assert format_label_selector(Sel()) == "x in (a,b)"


async def test_rest_mapper_shares_fetches_and_refreshes_on_miss() -> None:
    import asyncio

    from kubeloop.client import UnknownResource
    from kubeloop.client._mapper import RESTMapper

    calls: list[str] = []
    served: dict[str, list[dict[str, Any]]] = {"/api/v1": [
        {"name": "configmaps", "namespaced": True, "kind": "ConfigMap", "verbs": ["get"]}]}

    async def fetch(path: str) -> dict[str, Any]:
        calls.append(path)
        await asyncio.sleep(0.01)
        if path not in served:
            raise NotFound(status(404, "NotFound"))
        return {"resources": served[path]}

    m = RESTMapper(fetch)
    got = await asyncio.gather(*(m.resolve("v1/ConfigMap") for _ in range(5)))
    assert {r.plural for r in got} == {"configmaps"} and calls == ["/api/v1"]
    assert (await m.resolve("v1/configmaps")).kind == "ConfigMap" and len(calls) == 1  # cached
    with pytest.raises(UnknownResource, match=r"example\.com/v1/Widget: group/version is not served"):
        await m.resolve("example.com/v1/Widget")
    served["/apis/example.com/v1"] = [{"name": "widgets", "namespaced": True, "kind": "Widget"}]
    assert (await m.resolve("example.com/v1/Widget")).plural == "widgets"  # a miss looks again
    with pytest.raises(UnknownResource, match="no such kind"):
        await m.resolve("v1/Nope")
    assert calls.count("/api/v1") == 2


async def test_from_kubeconfig_fails_at_startup_on_broken_exec(tmp_path: Any) -> None:
    import yaml

    from kubeloop.client import Client
    from kubeloop.config import ExecPluginError

    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "x",
           "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
           "users": [{"name": "u", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                                      "command": "/bin/false", "interactiveMode": "Never"}}}],
           "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}]}
    path = tmp_path / "kc"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ExecPluginError, match="exited with code 1"):
        await Client.from_kubeconfig(str(path))


@given(st.binary(max_size=200))
def test_decode_event_never_fails_untyped(line: bytes) -> None:
    try:
        ev = decode_event(line)
    except MalformedWatchLine as exc:
        assert exc.line == line
    else:
        assert ev.type in {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"} and isinstance(ev.object, dict)


json_values = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                           max_leaves=8)


@given(st.dictionaries(st.sampled_from(["type", "object", "x"]), json_values, max_size=3))
def test_decode_event_json_shapes(doc: dict[str, Any]) -> None:
    line = orjson.dumps(doc)
    try:
        ev = decode_event(line)
    except MalformedWatchLine:
        etype = doc.get("type")
        assert not (isinstance(etype, str) and etype in {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"}
                    and isinstance(doc.get("object"), dict))
    else:
        assert ev.object == doc["object"]


@given(st.integers(min_value=400, max_value=599), st.binary(max_size=100) | json_values.map(orjson.dumps))
def test_error_from_any_response_is_typed(code: int, body: bytes) -> None:
    err = error_from_response(code, body)
    assert isinstance(err, ApiError)
    assert err.code == code or err.status.get("code")
    assert err.status.get("kind") == "Status" or isinstance(err.status, dict)


@given(st.integers(min_value=400, max_value=599),
       st.fixed_dictionaries({"kind": st.just("Status")},
                             optional={"code": json_values, "reason": json_values, "message": json_values,
                                       "details": json_values}))
def test_error_from_hostile_status(code: int, body: dict[str, Any]) -> None:
    err = error_from_response(code, orjson.dumps(body))
    assert isinstance(err, ApiError) and isinstance(err.code, int) and 100 <= err.code <= 599
    assert isinstance(str(err), str)
    assert isinstance(err.causes if isinstance(err, Invalid) else [], list)
    ev = WatchEvent("ERROR", body)
    ev_err = ev.error()
    assert isinstance(ev_err, ApiError) and 100 <= ev_err.code <= 599
    assert error_from_status({**body, "code": -5}, code=code).code == code
