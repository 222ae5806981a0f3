"""`kubeloop apiserver`: run the Kubernetes API server emulator until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sys

import click


@click.command("apiserver")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, show_default=True, type=int, help="Port (0: pick a free one).")
@click.option("--token", default=None, help="Require this bearer token (default: no authentication).")
@click.option("--kubeconfig-out", "kubeconfig_out", default=None, type=click.Path(dir_okay=False),
              help="Write a kubeconfig for the server to this file.")
@click.option("--tls/--no-tls", default=False, show_default=True,
              help="Serve HTTPS with a self-signed certificate generated at start (CA in the kubeconfig).")
@click.option("--bare", is_flag=True, default=False,
              help="Serve the API server alone, as envtest does: no namespace bootstrap (kube-root-ca.crt, default "
                   "ServiceAccount), no garbage collector, no namespace deletion, no Deployment/ReplicaSet/Job "
                   "controllers. The default also emulates kube-controller-manager, like a real cluster.")
@click.option("--gc/--no-gc", default=True, show_default=True, help="Run the ownerReferences garbage collector.")
@click.option("--history-size", default=10_000, show_default=True, type=int,
              help="Changes kept per resource for watch resume and list snapshots.")
@click.option("--bookmark-interval", default=60.0, show_default=True, type=float,
              help="Seconds between watch bookmarks.")
@click.option("--namespace-delete-delay", default=2.0, show_default=True, type=float,
              help="Seconds a deleted namespace stays Terminating before its contents are removed.")
@click.option("--rbac/--no-rbac", default=True, show_default=True,
              help="Authorize every caller but the admin (system:masters) with RBAC, as kube-apiserver does; "
                   "--no-rbac allows every authenticated caller everything.")
@click.option("--feature-gates", "feature_gates", default="", metavar="NAME=BOOL,...",
              help="Switch on features of Kubernetes versions after the emulated 1.24, e.g. WatchList=true "
                   "(streaming lists). Default: none, as a 1.24 cluster.")
def apiserver(host: str, port: int, token: str | None, kubeconfig_out: str | None, tls: bool, bare: bool, gc: bool,
              history_size: int, bookmark_interval: float, namespace_delete_delay: float, rbac: bool,
              feature_gates: str) -> None:
    """Run the Kubernetes API server emulator; prints its URL when ready."""
    from kubeloop.testing import INSTALL_HINT, missing_dependencies

    if missing := missing_dependencies():
        raise click.ClickException(f"the API server emulator needs {', '.join(missing)}: {INSTALL_HINT}")
    from kubeloop.testing.apiserver.features import FeatureGateError, FeatureGates
    from kubeloop.testing.apiserver.server import APIServer

    try:
        gates = FeatureGates.of(feature_gates)
    except FeatureGateError as e:
        raise click.BadParameter(str(e), param_hint="--feature-gates") from None

    async def run() -> None:
        server = APIServer(host=host, port=port, token=token, tls=tls, kubeconfig_path=kubeconfig_out, bare=bare, gc=gc,
                           history_size=history_size, bookmark_interval=bookmark_interval,
                           namespace_delete_delay=namespace_delete_delay, rbac=rbac, feature_gates=gates)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await server.start()
        except OSError as e:
            raise click.ClickException(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
        click.echo(server.url)
        sys.stdout.flush()
        try:
            await stop.wait()
        finally:
            await server.stop()

    asyncio.run(run())
