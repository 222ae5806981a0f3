"""pyproject.toml declares its metadata in the form current setuptools reads without a warning."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())


def test_the_license_is_an_spdx_expression_that_the_build_backend_reads() -> None:
    # setuptools >= 77 (PEP 639) warns on every install about a `license = {text = ...}` table
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    floor = next(r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools"))
    found = re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", floor)
    assert found is not None and int(found[1]) >= 77, floor
