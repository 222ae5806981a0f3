"""Installing an example's CustomResourceDefinition from Python (tests and the demo do; in a real
cluster you would ``kubectl apply -f crd.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kubeloop import Client
from kubeloop.testing import install_crd


def load_crd(path: Path) -> dict[str, Any]:
    """A CRD from a YAML file."""
    return dict(yaml.safe_load(path.read_text()))


async def install(client: Client, definition: Mapping[str, Any], kind: str, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Create a CRD (if missing) and wait until the API serves ``kind`` (``group/version/Kind``)."""
    served = await install_crd(client, definition, timeout=timeout)
    if served != kind:
        raise ValueError(f"the CRD serves {served}, not {kind}")
