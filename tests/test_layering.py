"""The layering of ``kubeloop/``, enforced: the import contract docs/architecture.md draws.

Each package imports only the packages above it in `LAYERS` (and itself), and no package imports
another package's private module (``kubeloop.<package>._<module>``): what a package offers the
others is what its ``__init__`` exports. Plain Python over the AST of every module, imports inside
functions and under ``TYPE_CHECKING`` included (a lazy import is still a dependency); the
``kubeloop/__init__.py`` facade, which re-exports the public names of several layers, and
``kubeloop/__main__.py`` (``python -m kubeloop``, the command line) are the modules outside the order.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "kubeloop"

LAYERS = ("meta", "metrics", "config", "client", "watch", "cache", "queue", "controller", "resources", "webhooks",
          "manager", "testing", "cli")
"""Top to bottom: a package may import the ones before it. ``metrics`` (a module) and ``meta``
import nothing of kubeloop; ``testing`` (the emulator, fixtures, runner) may use everything but
``cli``, which uses it (``kubeloop apiserver``, the demo). ``webhooks`` is the place the webhook
layer takes."""

ALLOWED: dict[tuple[str, str], str] = {
    # (importing module, imported name) -> why it is tolerated for now. Empty: the tree has no
    # violation. An entry whose import is gone fails `test_the_allowlist_lists_only_live_violations`.
}


def _package(path: Path, root: Path) -> str | None:
    """The top-level package (or module) of kubeloop ``path`` belongs to; None for the facade."""
    rel = path.relative_to(root)
    if rel in (Path("__init__.py"), Path("__main__.py")):
        return None
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path, root: Path) -> Iterator[tuple[str, tuple[str, ...], int]]:
    """(imported module, names taken from it, line) for every import in ``path``; relative ones resolved."""
    rel = path.relative_to(root).with_suffix("")
    package = ["kubeloop", *rel.parts[:-1]]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield module, tuple(alias.name for alias in node.names), node.lineno


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def violations() -> list[tuple[str, str, int, str]]:
    """(module path, imported module, line, what is wrong) over every module of kubeloop/."""
    return list(_violations(ROOT))


@functools.cache
def _violations(root: Path) -> tuple[tuple[str, str, int, str], ...]:
    out = []
    for path in sorted(root.rglob("*.py")):
        mine = _package(path, root)
        if mine is None:
            continue
        where = str(path.relative_to(root))
        for module, names, line in _imports(path, root):
            parts = module.split(".")
            if parts[0] != "kubeloop" or len(parts) < 2 or parts[1] == mine:
                continue
            other = parts[1]
            if other not in LAYERS:
                out.append((where, module, line, f"kubeloop.{other} is not in the layer table"))
                continue
            if mine in LAYERS and LAYERS.index(other) > LAYERS.index(mine):
                out.append((where, module, line, f"{mine} imports {other}, a layer below it"))
            # ``kubeloop.x._y`` (or anything in it), or ``from kubeloop.x import _y``: a private module
            private = [".".join(parts[:3])] if len(parts) > 2 and _private(parts[2]) else \
                [f"{module}.{n}" for n in names if len(parts) == 2 and _private(n)]
            out += [(where, name, line, f"{mine} imports a private module of {other}") for name in private]
    return tuple(out)


def test_every_package_imports_only_the_layers_above_it_and_no_private_module() -> None:
    found = [v for v in violations() if (v[0], v[1]) not in ALLOWED]
    assert not found, "\n".join(f"kubeloop/{path}:{line}: {what} ({name})" for path, name, line, what in found)


def test_every_package_is_in_the_layer_table() -> None:
    packages = {p.name.removesuffix(".py") for p in ROOT.iterdir()
                if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.name not in ("__init__.py", "__main__.py"))}
    assert packages - set(LAYERS) == set()


def test_the_allowlist_lists_only_live_violations() -> None:
    """An entry whose import is gone must go too, so the table only ever shrinks to empty."""
    live = {(path, name) for path, name, _, _ in violations()}
    assert set(ALLOWED) - live == set()


@pytest.mark.parametrize(("source", "expected"), [
    ("from kubeloop.manager import Manager\n", "cache imports manager, a layer below it"),
    ("from kubeloop.client._client import Client\n", "cache imports a private module of client"),
    ("from kubeloop.client import _errors\n", "cache imports a private module of client"),
    ("def f():\n    from kubeloop.cli import run\n", "cache imports cli, a layer below it"),
    ("from kubeloop.nowhere import x\n", "kubeloop.nowhere is not in the layer table"),
])
def test_the_check_finds_what_it_is_meant_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str,
                                              expected: str) -> None:
    """The check itself fails on each kind of violation (a check that cannot fail proves nothing)."""
    root = tmp_path / "kubeloop"
    (root / "cache").mkdir(parents=True)
    (root / "cache" / "__init__.py").write_text("")
    (root / "cache" / "_bad.py").write_text(source)
    (root / "cache" / "_fine.py").write_text("from kubeloop.client import Client\nfrom . import _bad\nimport kubeloop.meta\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", root)
    found = violations()
    assert [(path, what) for path, _, _, what in found] == [("cache/_bad.py", expected)]
