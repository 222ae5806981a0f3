"""The call signatures docs/controllers.md shows for `ctx.` are the real ones: every parameter
exists, and one shown positionally is not keyword-only (``ctx.event(..., obj=None)`` once was)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from kubeloop.controller import Context

DOC = Path(__file__).resolve().parents[1] / "docs" / "controllers.md"


def documented_calls() -> list[tuple[str, list[str]]]:
    """(method, parameters as written) of each `name(params)` in the doc's `ctx.` table."""
    table = DOC.read_text().split("| `ctx.` |", 1)[1].split("\n\n", 1)[0]
    out = []
    for row in table.splitlines():
        cell = row.split("|")[1] if row.startswith("|") else ""
        for name, params in re.findall(r"`(?:await )?(\w+)\(([^)]*)\)`", cell):
            out.append((name, [p.strip() for p in params.split(",") if p.strip()]))
    return out


def test_the_context_table_shows_the_real_signatures() -> None:
    calls = documented_calls()
    assert {name for name, _ in calls} >= {"apply", "apply_status", "patch_status", "event", "watch_target"}
    for name, params in calls:
        real = inspect.signature(getattr(Context, name)).parameters
        keyword_only = False
        for p in params:
            if p == "*":
                keyword_only = True
                continue
            pname = p.split("=", 1)[0]
            if pname[:1].isupper():  # `get(Type)`: a class passed positionally, not a parameter's name
                continue
            assert pname in real, f"ctx.{name}: no parameter {pname!r} ({list(real)})"
            is_kw = real[pname].kind is inspect.Parameter.KEYWORD_ONLY
            assert is_kw == keyword_only, f"ctx.{name}({', '.join(params)}): {pname!r} is " + (
                "keyword-only: put it after '*'" if is_kw else "positional")
