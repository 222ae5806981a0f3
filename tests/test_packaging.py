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


def test_the_readme_lists_every_runtime_dependency_and_the_extras_its_examples_need() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    said = readme.split("Runtime dependencies:", 1)[1].split("## ", 1)[0].lower()
    for requirement in PYPROJECT["project"]["dependencies"]:
        name = re.split(r"[<>=\[ ;]", requirement, maxsplit=1)[0].lower()
        assert name in said.replace("-", "_") or name in said, f"README's dependency list lacks {name}"
    for extra in PYPROJECT["project"]["optional-dependencies"]:
        if extra != "dev":
            assert f"kubeloop[{extra}]" in said, f"README does not say what the {extra!r} extra is for"
    code = readme.split("```python", 1)[1].split("```", 1)[0]
    assert "from kubeloop.resources import CustomResource" in code and "kubeloop[resources" in said
