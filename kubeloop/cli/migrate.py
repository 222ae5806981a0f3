"""`kubeloop migrate CRD...`: rewrite a CRD's stored objects in its storage version, then prune
``status.storedVersions`` (`kubeloop.webhooks.migrate_storage_version`), so that an old version can
be removed from the CRD.

Idempotent (a CRD already migrated costs one GET), resumable (the first SIGINT/SIGTERM stops after
the object being written and prints a ``--continue`` token; a second exits at once) and safe with
the operator running. The conversion webhook must be serving: objects stored in other versions are
read through it.
"""

from __future__ import annotations

import asyncio

import click

__all__ = ["migrate"]


async def _main(crds: tuple[str, ...], kubeconfig: str | None, context: str | None, page_size: int,
                continue_token: str | None) -> int:
    from kubeloop.client import ApiError, Client, NotFound
    from kubeloop.config import ConfigError
    from kubeloop.manager import ShutdownSignals
    from kubeloop.webhooks import migrate_storage_version

    try:
        client = await Client.from_kubeconfig(kubeconfig, context)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    stop = asyncio.Event()
    stopped = 0
    async with client:
        with ShutdownSignals(lambda _sig: stop.set()):
            for name in crds:
                try:
                    result = await migrate_storage_version(client, name, page_size=page_size,
                                                           continue_token=continue_token, stop=stop)
                except NotFound:
                    raise click.ClickException(f"CustomResourceDefinition {name} not found") from None
                except (ApiError, OSError, RuntimeError, ValueError) as exc:
                    raise click.ClickException(f"migrating {name}: {exc}") from None
                continue_token = None  # a token belongs to the CRD it was printed for
                if result.continue_token is not None:
                    click.echo(f"{name}: stopped after {result.rewritten} rewritten; resume with: kubeloop migrate "
                               f"{name} --continue '{result.continue_token}'")
                    stopped += 1
                    break
                if result.rewritten or result.skipped or result.stored_before != result.stored_after:
                    click.echo(f"{name}: {result.rewritten} rewritten in {result.storage_version}, {result.skipped} "
                               f"written by others meanwhile; storedVersions {result.stored_before} -> "
                               f"{result.stored_after}")
                else:
                    click.echo(f"{name}: already stored in {result.storage_version} only")
    return 1 if stopped else 0


@click.command("migrate")
@click.argument("crds", metavar="CRD...", nargs=-1, required=True)
@click.option("--kubeconfig", default=None, help="Kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config).")
@click.option("--context", default=None, help="Kubeconfig context (default: the current one).")
@click.option("--page-size", default=500, show_default=True, type=click.IntRange(min=1),
              help="Objects read per LIST request.")
@click.option("--continue", "continue_token", default=None, metavar="TOKEN",
              help="Resume where a stopped run of the first CRD said.")
def migrate(crds: tuple[str, ...], kubeconfig: str | None, context: str | None, page_size: int,
            continue_token: str | None) -> None:
    """Migrate the objects of each CRD (by name: widgets.example.com) to its storage version, then
    prune its status.storedVersions to that version alone."""
    raise SystemExit(asyncio.run(_main(crds, kubeconfig, context, page_size, continue_token)))
