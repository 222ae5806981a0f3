"""The `kubeloop` command line."""

from __future__ import annotations

import importlib

import click

_COMMANDS = {
    "apiserver": "kubeloop.cli.apiserver",
    "demo": "kubeloop.cli.demo",
    "manifests": "kubeloop.cli.manifests",
    "migrate": "kubeloop.cli.migrate",
    "run": "kubeloop.cli.run",
}
"""Each subcommand: the module defining it, as a click command of the same name."""


class _LazyGroup(click.Group):
    """Imports a subcommand's module only when that subcommand runs (or ``--help`` lists it): the
    start of ``kubeloop run`` does not pay for the emulator ``kubeloop demo`` embeds, nor
    ``kubeloop apiserver`` for the controller runtime (click's documented lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _COMMANDS.get(cmd_name)
        if module is None:
            return None
        command = getattr(importlib.import_module(module), cmd_name)
        assert isinstance(command, click.Command), f"{module}.{cmd_name} is not a click command"
        return command


@click.group(cls=_LazyGroup)
@click.version_option(package_name="kubeloop")
def main() -> None:
    """kubeloop: an asyncio Kubernetes controller runtime."""


if __name__ == "__main__":  # `python -m kubeloop.cli.main` is the command too, not a silent import
    main(prog_name="kubeloop")
