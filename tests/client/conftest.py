"""Fixtures for client integration tests: the plugin's `client` (a `Client` on the `apiserver`
fixture: the emulator, or the real cluster of KUBELOOP_TEST_KUBECONFIG) and its fresh `namespace`."""

from __future__ import annotations

import pytest


@pytest.fixture
def ns(namespace: str) -> str:
    """The plugin's `namespace` fixture under the short name these tests use."""
    return namespace

