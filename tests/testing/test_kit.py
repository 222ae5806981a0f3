"""`eventually`: when a check passes, and what the timeout says."""

from __future__ import annotations

import secrets

import pytest

from kubeloop.client import Client, NotFound, UnknownResource
from kubeloop.testing import delete_crd, eventually, install_crd
from tests.client.crds import widget_crd

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


async def test_a_check_that_only_asserts_passes_once_its_assertions_hold() -> None:
    calls = []

    def check() -> None:  # the Gomega style: no return value, assertions only
        calls.append(1)
        assert len(calls) >= 3, f"only {len(calls)} calls"

    assert await eventually(check, interval=0.001) is None
    assert len(calls) == 3


async def test_truthy_values_are_returned_and_falsy_ones_other_than_none_wait() -> None:
    values = iter([False, 0, [], "", {"ready": True}])
    assert await eventually(lambda: next(values), interval=0.001) == {"ready": True}

    async def async_check() -> bool:
        return True

    assert await eventually(async_check) is True


async def test_other_exceptions_propagate_at_once() -> None:
    def broken() -> bool:
        raise KeyError("no such thing")

    with pytest.raises(KeyError):
        await eventually(broken, timeout=10)


async def test_the_timeout_shows_the_last_failure_with_its_traceback() -> None:
    calls = []

    def check() -> None:
        calls.append(1)
        assert len(calls) < 0, f"attempt {len(calls)} failed"

    with pytest.raises(AssertionError) as err:
        await eventually(check, timeout=0.05, interval=0.001, what="the widget")
    message = str(err.value)
    assert message.startswith("the widget not met within 0.05s; the last failure:\n")
    assert f"attempt {len(calls)} failed" in message  # the last one, not a stale first one
    assert "in check\n" in message and "assert len(calls) < 0" in message  # its traceback
    assert isinstance(err.value.__cause__, AssertionError)


async def test_a_falsy_value_after_an_assertion_is_what_the_timeout_reports() -> None:
    outcomes = iter([AssertionError("early"), *([0] * 10_000)])

    def check() -> int:
        outcome = next(outcomes)
        if isinstance(outcome, AssertionError):
            raise outcome
        return outcome

    with pytest.raises(AssertionError, match=r"not met within 0.05s \(the check last returned 0\)"):
        await eventually(check, timeout=0.05, interval=0.001)


async def test_delete_crd_releases_what_finalizers_hold_and_waits(client: Client, namespace: str) -> None:
    """A test's operator stops before removing its finalizers: a plain delete would leave the CRD (and
    the namespace) in deletion for ever; `delete_crd` releases those objects, then waits."""
    group = f"kl{secrets.token_hex(3)}.example.com"
    ref = await install_crd(client, widget_crd(group))
    await client.create({"apiVersion": f"{group}/v1", "kind": "Widget",
                         "metadata": {"name": "held", "finalizers": ["example.com/cleanup"]}}, namespace=namespace)
    await delete_crd(client, f"widgets.{group}", timeout=30)
    with pytest.raises(NotFound):
        await client.get(CRD, f"widgets.{group}")
    with pytest.raises((NotFound, UnknownResource)):  # the kind is gone, with its objects
        await client.get(ref, "held", namespace=namespace)
    await delete_crd(client, f"widgets.{group}")  # gone already: nothing to do
