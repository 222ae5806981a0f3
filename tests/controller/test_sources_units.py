"""Unit tests of sources, event handlers, requests, results, logs and how a controller turns events into
queue keys."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubeloop.cache import Event, freeze
from kubeloop.controller import Controller, PrimaryKind, Request, Result, SourceSpec, generation_changed
from kubeloop.controller._handlers import mapped_requests, owner_requests
from kubeloop.controller._logs import RequestContextFilter, current_request, request_logger
from kubeloop.controller._run import dispatch
from kubeloop.controller._spec import combine_predicates
from kubeloop.meta import ADDED, DELETED, MODIFIED
from kubeloop.queue import LOW_PRIORITY, WorkQueue


def child(owners: list[dict[str, Any]], ns: str = "n") -> dict[str, Any]:
    return {"metadata": {"name": "c", "namespace": ns, "ownerReferences": owners}}


def ref(kind: str = "Widget", name: str = "w", controller: bool = True, api: str = "ex.com/v1") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": "u-" + name, "controller": controller}


def test_request_and_result() -> None:
    assert Request.of({"metadata": {"name": "a", "namespace": "b"}}, "c1") == Request("c1", "b", "a")
    assert str(Request("c", "", "node-1")) == "c:node-1"
    assert {Request("c", "n", "a"), Request("c", "n", "a")} == {Request("c", "n", "a")}
    with pytest.raises(ValueError):
        Result(requeue_after=-1)


WIDGET = PrimaryKind("ex.com", "Widget", True)


def test_owner_requests_follow_the_controller_reference_of_the_primary_kind() -> None:
    out: set[Request] = set()
    owner_requests(child([ref(controller=False, name="x"), ref(name="w")]), "c", WIDGET, False, out)
    assert out == {Request("c", "n", "w")}
    out.clear()
    owner_requests(child([ref(kind="Other"), ref(name="w2", controller=False)]), "c", WIDGET, False, out)
    assert out == set()  # the controller reference is not a Widget
    owner_requests(child([ref(name="a", controller=False), ref(name="b")]), "c", WIDGET, True, out)
    assert out == {Request("c", "n", "a"), Request("c", "n", "b")}
    out.clear()
    owner_requests(child([ref(api="other.com/v1")]), "c", WIDGET, False, out)
    assert out == set()  # same kind, other group
    owner_requests(child([ref(kind="Node", api="v1", name="n1")]), "c", PrimaryKind("", "Node", False), False, out)
    assert out == {Request("c", "", "n1")}  # cluster-scoped owner


def test_mapped_requests_accept_requests_pairs_and_names() -> None:
    out: set[Request] = set()
    obj = {"metadata": {"name": "s", "namespace": "n"}}
    mapped_requests(obj, "c", lambda o: [Request("other", "x", "y"), ("m", "p"), "same-ns"], out)
    assert out == {Request("other", "x", "y"), Request("c", "m", "p"), Request("c", "n", "same-ns")}
    with pytest.raises(TypeError):
        mapped_requests(obj, "c", lambda o: [42], out)  # type: ignore[list-item,return-value]


def test_a_map_function_returning_one_name_enqueues_that_name() -> None:
    """Issue 11 item 6: a bare ``str`` is one name, never one request per letter."""
    out: set[Request] = set()
    mapped_requests({"metadata": {"name": "s", "namespace": "n"}}, "c", lambda o: "web", out)
    assert out == {Request("c", "n", "web")}
    with pytest.raises(TypeError, match="expected a Request, a name"):
        mapped_requests({"metadata": {"name": "s"}}, "c", lambda o: b"web", out)  # type: ignore[arg-type,return-value]


def test_combine_predicates() -> None:
    assert combine_predicates(None) is None
    p = combine_predicates([generation_changed, lambda o, n: n is not None])
    assert p is not None
    old = {"metadata": {"generation": 1}}
    assert p(old, {"metadata": {"generation": 2}}) and not p(old, {"metadata": {"generation": 1}})


async def noop(req: Request, ctx: Any) -> None:
    return None


def event(t: str, name: str, new: Any = None, old: Any = None, initial: bool = False) -> Event:
    return Event(t, "default", "core/v1/configmaps", "n", name, freeze(new) if new is not None else None,
                 old=freeze(old) if old is not None else None, initial=initial)


def test_dispatch_priorities_predicates_and_owner_mapping() -> None:
    ctl = (Controller("dispatch-test", for_="ex.com/v1/Widget", reconcile=noop, predicates=generation_changed)
           .owns("v1/ConfigMap"))
    queue: WorkQueue[Request] = WorkQueue(ctl.name)
    log = logging.getLogger("kubeloop.test.dispatch")
    primary, owned = ctl.sources
    dispatch(primary, WIDGET, event(ADDED, "a", {"metadata": {"name": "a", "generation": 1}}, initial=True),
             queue.add, log)
    dispatch(primary, WIDGET, event(ADDED, "b", {"metadata": {"name": "b", "generation": 1}}), queue.add, log)
    assert queue.core.priority_of(Request("default", "n", "a")) == LOW_PRIORITY
    assert queue.core.priority_of(Request("default", "n", "b")) == 0
    same = {"metadata": {"name": "c", "generation": 1}}
    dispatch(primary, WIDGET, event(MODIFIED, "c", same, same), queue.add, log)  # status-only: filtered
    assert Request("default", "n", "c") not in queue
    old = child([ref(name="old-owner")])
    new = child([ref(name="new-owner")])
    dispatch(owned, WIDGET, event(MODIFIED, "c", new, old), queue.add, log)
    assert Request("default", "n", "old-owner") in queue and Request("default", "n", "new-owner") in queue
    dispatch(owned, WIDGET, event(DELETED, "c", None, child([ref(name="gone-owner")])), queue.add, log)
    assert Request("default", "n", "gone-owner") in queue


def test_builder_keeps_a_frozen_spec() -> None:
    ctl = Controller("spec-test", for_="v1/ConfigMap", reconcile=noop)
    before = ctl.spec
    assert ctl.owns("v1/Secret") is ctl  # the fluent builder returns the controller ...
    assert ctl.spec is not before and len(before.sources) == 1  # ... and replaces the frozen spec
    with pytest.raises(AttributeError):
        ctl.spec.name = "other"  # type: ignore[misc]
    assert [s.role for s in ctl.spec.sources] == ["for", "owns"] and ctl.spec.field_manager == "spec-test"


def test_builder_validation_and_sources() -> None:
    with pytest.raises(ValueError):
        Controller("bad name!", for_="v1/ConfigMap", reconcile=noop)
    with pytest.raises(ValueError):
        Controller("x", for_="ConfigMap", reconcile=noop)
    with pytest.raises(ValueError):
        Controller("x", for_="v1/ConfigMap", reconcile=noop, max_concurrent_reconciles=0)
    with pytest.raises(TypeError, match="async function"):
        Controller("x", for_="v1/ConfigMap", reconcile=lambda req, ctx: None)  # type: ignore[arg-type,return-value]
    ctl = (Controller("x", for_="v1/ConfigMap", reconcile=noop, namespace="a")
           .owns("v1/Secret").watches("v1/Pod", lambda o: None, cluster="east", label_selector="app=x"))
    roles = [(s.role, s.resource, s.selection.metadata_only, s.cluster) for s in ctl.sources]
    assert roles == [("for", "v1/ConfigMap", False, None), ("owns", "v1/Secret", True, None),
                     ("watches", "v1/Pod", False, "east")]
    assert ctl.sources[0].selection.namespace == "a"
    assert isinstance(ctl.sources[2], SourceSpec) and "labels=app=x" in ctl.sources[2].describe()


def test_request_logger_and_context_filter(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("kubeloop.test.logs")
    log = request_logger(logger, "ctl", Request("c1", "ns", "obj"), "1f")
    with caplog.at_level(logging.INFO, logger="kubeloop.test.logs"):
        log.info("hello %s", "world")
    rec = caplog.records[-1]
    assert rec.getMessage() == "hello world [controller=ctl cluster=c1 namespace=ns name=obj reconcile_id=1f]"
    assert (rec.controller, rec.object_name, rec.name) == ("ctl", "obj", "kubeloop.test.logs")
    other = logging.LogRecord("x", logging.INFO, "f", 1, "m", None, None)
    token = current_request.set(("ctl", Request("c1", "ns", "obj"), "2"))
    try:
        assert RequestContextFilter().filter(other)
    finally:
        current_request.reset(token)
    assert other.object_name == "obj" and other.cluster == "c1"  # type: ignore[attr-defined]
