"""Error classification: HTTP codes, Status objects, client exceptions by duck typing."""

from __future__ import annotations

import aiohttp
import pytest

from kubeloop.client import _errors as client_errors
from kubeloop.watch._errors import ErrorKind, WatchError, classify_exception, classify_status, kind_for


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (410, ErrorKind.GONE),
        (404, ErrorKind.NOT_FOUND),
        (403, ErrorKind.FORBIDDEN),
        (401, ErrorKind.UNAUTHORIZED),
        (429, ErrorKind.TOO_MANY_REQUESTS),
        (400, ErrorKind.REJECTED),
        (422, ErrorKind.REJECTED),
        (500, ErrorKind.SERVER),
        (503, ErrorKind.SERVER),
        (409, ErrorKind.OTHER),
    ],
)
def test_kind_for_code(code: int, kind: ErrorKind) -> None:
    assert kind_for(code) is kind


def test_kind_for_reason_without_code_and_too_large_rv() -> None:
    assert kind_for(None, "Expired") is ErrorKind.GONE
    assert kind_for(None, "Forbidden") is ErrorKind.FORBIDDEN
    assert kind_for(504, "Timeout") is ErrorKind.TIMEOUT
    assert kind_for(504, "Timeout", "Too large resource version: 20, current: 10") is ErrorKind.GONE


def test_classify_status_410_expired() -> None:
    status = {"kind": "Status", "status": "Failure", "code": 410, "reason": "Expired",
              "message": "too old resource version: 5 (120)"}
    e = classify_status(status)
    assert e == WatchError(ErrorKind.GONE, "too old resource version: 5 (120)", 410, "Expired")
    assert str(e) == "Gone 410: too old resource version: 5 (120)"


def test_classify_status_too_large_rv_cause_and_retry_after() -> None:
    status = {"code": 504, "reason": "Timeout", "message": "Timeout: Too large resource version",
              "details": {"causes": [{"reason": "ResourceVersionTooLarge"}], "retryAfterSeconds": 1}}
    e = classify_status(status)
    assert e.kind is ErrorKind.GONE
    assert e.retry_after == 1.0


def test_classify_status_that_is_not_a_status() -> None:
    e = classify_status("garbage")
    assert e.kind is ErrorKind.OTHER
    assert "garbage" in e.message


def test_classify_real_client_errors() -> None:
    forbidden = client_errors.Forbidden(
        {"code": 403, "reason": "Forbidden", "message": 'pods is forbidden: User "x" cannot watch resource "pods"'}
    )
    e = classify_exception(forbidden)
    assert e.kind is ErrorKind.FORBIDDEN
    assert e.code == 403
    assert e.message == 'pods is forbidden: User "x" cannot watch resource "pods"'
    gone = classify_exception(client_errors.Gone({"code": 410, "reason": "Expired", "message": "expired"}))
    assert gone.kind is ErrorKind.GONE
    busy = classify_exception(client_errors.TooManyRequests({"code": 429, "message": "slow down"}, retry_after=3))
    assert (busy.kind, busy.retry_after) == (ErrorKind.TOO_MANY_REQUESTS, 3.0)
    assert classify_exception(client_errors.NotFound({"code": 404})).kind is ErrorKind.NOT_FOUND
    assert classify_exception(client_errors.ClientConnectionError("refused")).kind is ErrorKind.TRANSPORT
    assert classify_exception(client_errors.RequestTimeoutError("slow")).kind is ErrorKind.TIMEOUT
    assert classify_exception(client_errors.WatchStreamError("cut")).kind is ErrorKind.TRANSPORT
    assert classify_exception(client_errors.UnknownResource("no such kind")).kind is ErrorKind.NOT_FOUND


def test_classify_duck_typed_and_io_exceptions() -> None:
    class Weird(Exception):
        code = 503
        retry_after = 2

    e = classify_exception(Weird("unavailable"))
    assert (e.kind, e.code, e.retry_after) == (ErrorKind.SERVER, 503, 2.0)
    assert classify_exception(ConnectionResetError("reset")).kind is ErrorKind.TRANSPORT
    assert classify_exception(TimeoutError()).kind is ErrorKind.TIMEOUT
    assert classify_exception(aiohttp.ServerDisconnectedError()).kind is ErrorKind.TRANSPORT
    resp = aiohttp.ClientResponseError(None, (), status=410, message="Gone")  # type: ignore[arg-type]
    assert classify_exception(resp).kind is ErrorKind.GONE
    other = classify_exception(ValueError("bug"))
    assert other.kind is ErrorKind.OTHER
    assert other.message == "ValueError: bug"


def test_classify_client_timeout_with_too_large_resource_version_cause() -> None:
    status = {"code": 504, "reason": "Timeout", "message": "Timeout: request did not complete",
              "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                          "retryAfterSeconds": 1}}
    e = classify_exception(client_errors.Timeout(status))
    assert e.kind is ErrorKind.GONE
    assert e.retry_after == 1.0
    plain = classify_exception(client_errors.Timeout({"code": 504, "reason": "Timeout", "message": "slow"}))
    assert plain.kind is ErrorKind.TIMEOUT
