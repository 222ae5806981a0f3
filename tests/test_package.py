"""The top-level ``kubeloop`` names are imported on first use (PEP 562): each one in ``__all__`` resolves."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kubeloop


@pytest.mark.parametrize("name", kubeloop.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(kubeloop, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Controler'"):
        kubeloop.Controler  # noqa: B018


def test_importing_the_package_does_not_import_the_manager() -> None:
    code = "import sys, kubeloop; print('kubeloop.manager' in sys.modules, 'kubeloop.controller' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
