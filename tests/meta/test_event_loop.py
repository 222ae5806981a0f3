"""`run_event_loop`: uvloop's loop where it is installed, asyncio's when told so."""

from __future__ import annotations

import asyncio

import pytest

from kubeloop.meta import EVENT_LOOP_ENV, event_loop_factory, run_event_loop


async def loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_uvloop_where_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    uvloop = pytest.importorskip("uvloop")
    monkeypatch.delenv(EVENT_LOOP_ENV, raising=False)
    assert event_loop_factory() is uvloop.new_event_loop
    assert run_event_loop(loop_module()).startswith("uvloop")


def test_asyncio_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EVENT_LOOP_ENV, "asyncio")
    assert event_loop_factory() is None
    assert run_event_loop(loop_module()).startswith("asyncio")
