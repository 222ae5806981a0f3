"""The `kubeloop` command line."""

from __future__ import annotations

import click


@click.group()
@click.version_option(package_name="kubeloop")
def main() -> None:
    """kubeloop: an asyncio Kubernetes controller runtime."""


def _register() -> None:
    from .apiserver import apiserver
    from .demo import demo
    from .manifests import manifests
    from .run import run

    main.add_command(apiserver)
    main.add_command(demo)
    main.add_command(manifests)
    main.add_command(run)


_register()
