"""Structured reconcile logs: every line carries the controller and the request.

``request_logger`` returns a ``LoggerAdapter`` that puts ``controller``, ``cluster``,
``namespace``, ``name`` and ``reconcile_id`` on each record (for JSON formatters, as record
attributes) and appends them to the message as ``key=value`` pairs (for plain text formatters), so
a line is never ambiguous about which object it is about. The same fields are also set in a
context variable for the duration of the reconcile, so ``RequestContextFilter`` can stamp them on
records of *other* loggers (the client's retries, for instance) emitted from inside a reconcile.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
from collections.abc import Mapping, MutableMapping
from typing import Any

from kubeloop.controller._request import Request

FIELDS = ("controller", "cluster", "namespace", "name", "reconcile_id")
"""The fields of a reconcile's log lines (``name`` is the record attribute ``object_name``:
``LogRecord.name`` is the logger's)."""

_ATTR = {"name": "object_name"}

current_request: contextvars.ContextVar[tuple[str, Request, str] | None] = contextvars.ContextVar(
    "kubeloop_reconcile", default=None
)
"""(controller, request, reconcile id) of the reconcile running in this task (None outside one)."""

_ids = itertools.count(1)


def next_reconcile_id() -> str:
    """A process-unique id for one reconcile (correlates its log lines)."""
    return f"{next(_ids):x}"


def request_fields(controller: str, request: Request, reconcile_id: str) -> dict[str, str]:
    """The structured fields of one reconcile."""
    return {
        "controller": controller,
        "cluster": request.cluster,
        "namespace": request.namespace,
        "name": request.name,
        "reconcile_id": reconcile_id,
    }


def _suffix(fields: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items() if v)


class RequestLogger(logging.LoggerAdapter):  # type: ignore[type-arg,unused-ignore]
    """A logger bound to one reconcile (see the module docstring)."""

    def __init__(self, logger: logging.Logger, fields: Mapping[str, str]) -> None:
        super().__init__(logger, {_ATTR.get(k, k): v for k, v in fields.items()})
        self._text = _suffix(fields)

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        extra = kwargs.get("extra")
        kwargs["extra"] = {**self.extra, **extra} if extra else self.extra  # type: ignore[dict-item]
        return f"{msg} [{self._text}]", kwargs


def request_logger(logger: logging.Logger, controller: str, request: Request, reconcile_id: str) -> RequestLogger:
    """A logger for one reconcile of ``request``."""
    return RequestLogger(logger, request_fields(controller, request, reconcile_id))


class RequestContextFilter(logging.Filter):
    """Adds the current reconcile's fields to records of any logger (install on a handler)."""

    def filter(self, record: logging.LogRecord) -> bool:
        current = current_request.get()
        if current:
            for k, v in request_fields(*current).items():
                k = _ATTR.get(k, k)
                if not hasattr(record, k):
                    setattr(record, k, v)
        return True


class RepeatedErrors:
    """How many times each error (its type and where it was raised) has failed a reconcile.

    The first occurrence is logged with its traceback, the repeats one line each: a bug that fails
    every reconcile shows where it is once without flooding the log. At most ``remembered``
    distinct errors are counted (the oldest is forgotten first).
    """

    def __init__(self, remembered: int = 1000) -> None:
        self.remembered = remembered
        self._seen: dict[tuple[str, str, int], int] = {}

    def count(self, exc: BaseException) -> int:
        """Count one more failure by ``exc``; returns how many there have been (1: the first)."""
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = (tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb is not None else ("", 0)
        key = (type(exc).__qualname__, *where)
        seen = self._seen.get(key, 0) + 1
        if seen == 1 and len(self._seen) >= self.remembered:
            self._seen.pop(next(iter(self._seen)))
        self._seen[key] = seen
        return seen
