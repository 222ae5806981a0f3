"""An operator module and its convention: what `kubeloop run MODULE_OR_FILE` (and, in tests,
`kubeloop.testing.OperatorRunner`) loads and hands a `Manager`.

The module convention (checked in this order):

1. ``def setup(manager)`` (or ``async def``): called with the `kubeloop.Manager`; it adds
   controllers (``manager.add(...)``), shared informers with indexes (``manager.informer(...)``)
   and background work (``manager.add_runnable(...)``). ``manager.namespace`` is ``--namespace``
   (or the kubeconfig context's / the pod's namespace), for modules that scope themselves to it.
2. ``controllers``: a list of `kubeloop.Controller` (or a function returning one), each added
   with the defaults (they need leadership when leader election is on).
3. ``webhooks``: a `kubeloop.webhooks.Webhooks` set, served with ``manager.add_webhooks`` (its
   certificates as the manager's `WebhookOptions` say) unless ``setup()`` registered one itself.
   A module may define webhooks only.

MODULE_OR_FILE is a file (``path/to/controller.py``; a file inside a package is imported as part
of that package, so relative imports work) or an importable module name (``mypkg.controllers``;
the current directory is on the path). It lives here, in the manager layer, so the command line
and the test kit load modules with the same code and the same one-line errors (`LoadError`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kubeloop.controller import Controller

if TYPE_CHECKING:
    from kubeloop.manager._manager import Manager

__all__ = ["LoadError", "check_module", "default_lease_name", "load_target", "module_webhooks", "setup_manager"]


class LoadError(Exception):
    """The target could not be loaded or defines nothing to run; ``str()`` is one line."""


def _package_root(path: Path) -> tuple[Path, str]:
    """(directory to put on sys.path, dotted module name) for a file, honouring packages."""
    parts = [path.stem]
    parent = path.parent
    while (parent / "__init__.py").exists():
        parts.insert(0, parent.name)
        parent = parent.parent
    return parent, ".".join(parts)


def _import_error(target: str, exc: BaseException) -> LoadError:
    where = ""
    tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        last = tb[-1]
        where = f" ({last.filename}:{last.lineno})"
    return LoadError(f"error importing {target}: {type(exc).__name__}: {exc}{where}")


def load_target(target: str) -> ModuleType:
    """Import MODULE_OR_FILE (see the module docstring); `LoadError` on failure."""
    path = Path(target)
    if target.endswith(".py") or os.sep in target or path.exists():
        if path.is_dir():
            if not (path / "__init__.py").exists():
                raise LoadError(f"{target} is a directory, not a Python file or package")
            path = path / "__init__.py"
        if not path.is_file():
            raise LoadError(f"no such file: {target}")
        root, name = _package_root(path.resolve())
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        if "." in name:
            return _import(name, target)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise LoadError(f"cannot load {target} as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise _import_error(target, exc) from exc
        return module
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    return _import(target, target)


def _import(name: str, target: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise LoadError(f"no module named {name!r} (give a file such as path/to/controller.py, "
                            "or a module importable from the current directory)") from None
        raise _import_error(target, exc) from exc
    except Exception as exc:
        raise _import_error(target, exc) from exc


def _no_controllers(target: str) -> LoadError:
    return LoadError(f"{target} defines no controllers: give it `controllers = [Controller(...), ...]`, "
                     "`def setup(manager): manager.add(...)` or `webhooks = Webhooks(...)`")


def module_webhooks(module: ModuleType) -> Any:
    """The module's ``webhooks`` when it is a `kubeloop.webhooks.Webhooks` set, else None (without
    importing kubeloop.webhooks: a module that defines a set has imported it)."""
    package = sys.modules.get("kubeloop.webhooks")
    found = getattr(module, "webhooks", None)
    return found if package is not None and isinstance(found, package.Webhooks) else None


def check_module(module: ModuleType, target: str = "") -> None:
    """Fail early (before any cluster is contacted) when the module offers no convention."""
    if not callable(getattr(module, "setup", None)) and getattr(module, "controllers", None) is None \
            and module_webhooks(module) is None:
        raise _no_controllers(target or module.__name__)


async def setup_manager(module: ModuleType, manager: Manager, target: str = "") -> None:
    """Apply the module convention to ``manager``; `LoadError` when nothing runs."""
    target = target or module.__name__
    setup = getattr(module, "setup", None)
    if callable(setup):
        result = setup(manager)
        if inspect.isawaitable(result):
            await result
    else:
        found = getattr(module, "controllers", None)
        if callable(found):
            found = found()
        if found is not None:
            if isinstance(found, Controller):
                found = [found]
            for i, c in enumerate(found):
                if not isinstance(c, Controller):
                    raise LoadError(f"{target}: controllers[{i}] is a {type(c).__name__}, not a kubeloop.Controller")
                manager.add(c)
    found = module_webhooks(module)
    if found is not None and manager.webhooks is None:
        manager.add_webhooks(found)
    if not manager.controllers and not manager.runnables and manager.webhooks is None:
        raise _no_controllers(target)


def default_lease_name(module: ModuleType) -> str:
    """A Lease name from the module's name (``examples.webapp.controller`` -> ``examples-webapp-controller``)."""
    slug = re.sub(r"[^a-z0-9-]+", "-", module.__name__.lower()).strip("-")
    return (slug or "kubeloop")[:63].rstrip("-")
