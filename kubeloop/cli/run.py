"""`kubeloop run MODULE_OR_FILE`: run the controllers a Python module defines, in a Manager.

The module convention (``setup(manager)``, else ``controllers``) and how MODULE_OR_FILE is
imported are `kubeloop.manager.load_target`'s and `setup_manager`'s (shared with
`kubeloop.testing.OperatorRunner`). Errors are one line: a missing module or file, a module that
defines no controllers, a bad kubeconfig, a cluster that cannot be reached (after a bounded retry,
``--connect-timeout``), a port that is taken.
"""

from __future__ import annotations

import json
import logging
import sys
import time
import traceback
from types import ModuleType
from typing import Any

import click

from kubeloop.meta import run_event_loop

__all__ = ["configure_logging", "run"]

# ---------------------------------------------------------------------- logging

_RECORD_FIELDS = (("controller", "controller"), ("cluster", "cluster"), ("namespace", "namespace"),
                  ("object_name", "name"), ("reconcile_id", "reconcile_id"))


class JSONFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, the reconcile's fields, error."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
                               "level": record.levelname.lower(), "logger": record.name,
                               "msg": record.getMessage()}
        for attr, key in _RECORD_FIELDS:
            value = getattr(record, attr, None)
            if value:
                out[key] = value
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


_QUIET_LIBRARIES = ("asyncio", "aiohttp")
"""Libraries whose INFO/DEBUG lines are noise in an operator's log: WARNING and above only."""


def configure_logging(fmt: str = "text", verbose: bool = False) -> None:
    """Log to stderr as text or JSON: INFO (DEBUG with ``verbose``) for every logger, the user's own
    included (an operator's `logging.info(...)` must show up, not only kubeloop's), except the
    chatty libraries of `_QUIET_LIBRARIES`."""
    from kubeloop.controller import RequestContextFilter

    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        formatter: logging.Formatter = JSONFormatter()
        formatter.converter = time.gmtime
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    handler.setFormatter(formatter)
    handler.addFilter(RequestContextFilter())
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    level = logging.DEBUG if verbose else logging.INFO
    root.setLevel(level)
    logging.getLogger("kubeloop").setLevel(level)
    for name in _QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)


# ---------------------------------------------------------------------- the command

async def _main(module: ModuleType, target: str, opts: dict[str, Any]) -> None:
    from kubeloop.client import Client
    from kubeloop.config import ConfigError
    from kubeloop.manager import (
        LeaderElection,
        LoadError,
        Manager,
        ManagerError,
        Sharding,
        WebhookOptions,
        default_lease_name,
        setup_manager,
        webhook_service_name,
    )

    try:
        client = await Client.from_kubeconfig(opts["kubeconfig"], opts["context"], namespace=opts["namespace"])
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        election: LeaderElection | None = None
        if opts["leader_election"]:
            try:
                election = LeaderElection(opts["leader_election_id"] or default_lease_name(module),
                                          namespace=opts["leader_election_namespace"],
                                          lease_duration=opts["lease_duration"],
                                          renew_deadline=opts["renew_deadline"], retry_period=opts["retry_period"])
            except ValueError as exc:
                raise click.ClickException(f"leader election: {exc}") from None
        sharding: Sharding | None = None
        if opts["sharding"]:
            if election is not None:
                raise click.ClickException("--sharding and --leader-election exclude each other: sharding "
                                           "already decides which replica runs each key")
            try:
                sharding = Sharding(opts["sharding_name"] or default_lease_name(module),
                                    namespace=opts["leader_election_namespace"],
                                    identity=opts["sharding_identity"] or "",
                                    lease_duration=opts["lease_duration"], renew_deadline=opts["renew_deadline"],
                                    retry_period=opts["retry_period"], mode=opts["sharding_mode"])
            except ValueError as exc:
                raise click.ClickException(f"sharding: {exc}") from None
        try:
            webhook_options = WebhookOptions(
                port=opts["webhook_port"], dev_host=opts["webhook_host"], cert_dir=opts["webhook_cert_dir"],
                service=None if opts["webhook_host"] or opts["webhook_cert_dir"] else
                opts["webhook_service"] or webhook_service_name(default_lease_name(module)),
                secret=opts["webhook_secret"], migrate=opts["webhook_migrate"])
        except ValueError as exc:
            raise click.ClickException(f"webhooks: {exc}") from None
        manager = Manager(client, namespace=opts["namespace"], leader_election=election, sharding=sharding,
                          health_port=opts["health_port"] or None, metrics_port=opts["metrics_port"] or None,
                          bind_address=opts["bind_address"], graceful_shutdown_timeout=opts["shutdown_timeout"],
                          connect_timeout=opts["connect_timeout"], webhook_options=webhook_options)
        try:
            await setup_manager(module, manager, target)
        except (LoadError, ManagerError) as exc:
            raise click.ClickException(str(exc)) from None
        if manager.webhooks is None and opts["webhook_host"]:
            raise click.ClickException(f"{target} serves no webhooks for --webhook-host: give it "
                                       "`webhooks = Webhooks(...)` or `manager.add_webhooks(...)` in setup()")
        try:
            await manager.run(handle_signals=True)
        except ManagerError as exc:
            raise click.ClickException(str(exc)) from None
    finally:
        await client.close()


@click.command("run")
@click.argument("target", metavar="MODULE_OR_FILE")
@click.option("--kubeconfig", default=None, help="Kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config).")
@click.option("--context", default=None, help="Kubeconfig context (default: the current one).")
@click.option("--namespace", "-n", default=None,
              help="Default namespace: the Lease's, and manager.namespace for setup() (default: the context's).")
@click.option("--metrics-port", default=8080, show_default=True, type=int, help="Serve /metrics here (0: off).")
@click.option("--health-port", default=8081, show_default=True, type=int,
              help="Serve /healthz and /readyz here (0: off; may equal --metrics-port).")
@click.option("--bind-address", default="0.0.0.0", show_default=True, help="Address the two ports bind to.")
@click.option("--leader-election/--no-leader-election", default=False, show_default=True,
              help="Run the controllers only on the replica holding a coordination.k8s.io Lease.")
@click.option("--leader-election-id", default=None, help="The Lease's name (default: from the module name).")
@click.option("--leader-election-namespace", default=None,
              help="The Leases' namespace, for leader election or sharding (default: --namespace).")
@click.option("--sharding/--no-sharding", default=False, show_default=True,
              help="Spread the controllers' keys over the replicas (membership Leases; docs/sharding.md).")
@click.option("--sharding-name", default=None, help="The sharding group's name (default: from the module name).")
@click.option("--sharding-mode", type=click.Choice(["sharded", "broadcast"]), default="sharded", show_default=True,
              help="sharded: each key on one replica; broadcast: every replica reconciles every key.")
@click.option("--sharding-identity", default=None, envvar="KUBELOOP_SHARDING_IDENTITY",
              help="This replica's name in the group (default: hostname_uuid; env KUBELOOP_SHARDING_IDENTITY).")
@click.option("--lease-duration", default=15.0, show_default=True, type=float, envvar="KUBELOOP_LEASE_DURATION",
              help="Seconds (leader election and sharding).")
@click.option("--renew-deadline", default=10.0, show_default=True, type=float, envvar="KUBELOOP_RENEW_DEADLINE",
              help="Seconds.")
@click.option("--retry-period", default=2.0, show_default=True, type=float, envvar="KUBELOOP_RETRY_PERIOD",
              help="Seconds.")
@click.option("--shutdown-timeout", default=30.0, show_default=True, type=float,
              help="Seconds in-flight reconciles get to finish after SIGTERM/SIGINT.")
@click.option("--connect-timeout", default=30.0, show_default=True, type=float,
              help="Seconds to keep retrying an unreachable cluster at start-up.")
@click.option("--webhook-port", default=9443, show_default=True, type=click.IntRange(0, 65535),
              help="Serve the module's webhooks (if it has any) over HTTPS here (0: a free port).")
@click.option("--webhook-host", default=None, metavar="ADDRESS",
              help="The dev loop: serve the webhooks on ADDRESS (one the API server can call, e.g. 127.0.0.1) with a "
                   "CA of its own, install the webhook configurations and the CRDs' conversion pointing at "
                   "https://ADDRESS:PORT, and put them back on exit.")
@click.option("--webhook-service", default=None,
              help="In a cluster: the webhook Service's name, in --namespace; the certificate is for it and kept "
                   "in a Secret (default: from the module name, as `kubeloop manifests` names it).")
@click.option("--webhook-secret", default=None,
              help="The Secret holding the webhook CA and certificate (default: <webhook service>-tls).")
@click.option("--webhook-cert-dir", default=None, metavar="DIR",
              help="cert-manager mode: tls.crt, tls.key and ca.crt from this mounted Secret directory, reloaded "
                   "when they change.")
@click.option("--webhook-migrate/--no-webhook-migrate", default=False, show_default=True,
              help="Also migrate the converted CRDs' stored objects to their storage version (on the leader).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--verbose", "-v", is_flag=True, help="Debug logs.")
def run(target: str, kubeconfig: str | None, context: str | None, namespace: str | None, metrics_port: int,
        health_port: int, bind_address: str, leader_election: bool, leader_election_id: str | None,
        leader_election_namespace: str | None, sharding: bool, sharding_name: str | None, sharding_mode: str,
        sharding_identity: str | None, lease_duration: float, renew_deadline: float, retry_period: float,
        shutdown_timeout: float, connect_timeout: float, webhook_port: int, webhook_host: str | None,
        webhook_service: str | None, webhook_secret: str | None, webhook_cert_dir: str | None,
        webhook_migrate: bool, log_format: str, verbose: bool) -> None:
    """Run the controllers and webhooks MODULE_OR_FILE defines (``setup(manager)``, ``controllers``,
    ``webhooks``) until SIGTERM.

    The first SIGTERM/SIGINT stops gracefully (in-flight reconciles finish, the Lease is
    released, the dev loop's webhook configurations are removed, exit code 0); a second one exits
    at once.
    """
    from kubeloop.manager import LoadError, check_module, load_target

    configure_logging(log_format, verbose)
    try:
        module = load_target(target)
        check_module(module, target)
    except LoadError as exc:
        if verbose and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__)
        raise click.ClickException(str(exc)) from None
    opts = {"kubeconfig": kubeconfig, "context": context, "namespace": namespace, "metrics_port": metrics_port,
            "health_port": health_port, "bind_address": bind_address, "leader_election": leader_election,
            "leader_election_id": leader_election_id, "leader_election_namespace": leader_election_namespace,
            "sharding": sharding, "sharding_name": sharding_name, "sharding_mode": sharding_mode,
            "sharding_identity": sharding_identity, "lease_duration": lease_duration, "renew_deadline": renew_deadline, "retry_period": retry_period,
            "shutdown_timeout": shutdown_timeout, "connect_timeout": connect_timeout, "webhook_port": webhook_port,
            "webhook_host": webhook_host, "webhook_service": webhook_service, "webhook_secret": webhook_secret,
            "webhook_cert_dir": webhook_cert_dir, "webhook_migrate": webhook_migrate}
    run_event_loop(_main(module, target, opts))
