"""`kubeloop manifests MODULE_OR_FILE`: the YAML to install an operator, derived from its controllers.

The module is loaded as `kubeloop run` loads it (``setup(manager)`` or ``controllers``), with an
offline Manager that never contacts a cluster; the documents printed are: the CRDs the module
declares (its `kubeloop.resources.CustomResource` classes, a ``crds`` list or a ``crd()`` function
returning CRD dicts), a ServiceAccount, a ClusterRole and/or Roles with the rules the controllers
need (`kubeloop.resources.manifests` says which rule comes from which declaration) and their
bindings, and a Deployment running ``kubeloop run`` with probes, metrics and leader election. A
module that serves webhooks (``webhooks``, or ``manager.add_webhooks`` in ``setup()``) also gets
their configurations, the webhook Service, the CRDs' conversion block and the certificates' RBAC
(`kubeloop.webhooks.WebhookDeployment`).

``--kubeconfig`` resolves kinds the module does not declare (a CRD installed by someone else)
through the cluster's discovery. ``--observe TESTS`` learns the rules from a pytest run instead:
every emulator the tests start records the requests made, and the rules printed are exactly
those (see docs/manifests.md for what that includes).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import yaml

from kubeloop.manager import (
    LoadError,
    ManagerError,
    check_module,
    default_lease_name,
    load_target,
    setup_manager,
    webhook_service_name,
)

__all__ = ["manifests", "module_crds", "operator_of"]

OFFLINE_SERVER = "https://127.0.0.1:1"  # refused at once (no DNS): manifests never contacts a cluster


def module_crds(module: ModuleType) -> list[dict[str, Any]]:
    """The CRDs a module declares: its CustomResource classes (one CRD per kind), ``crds``, ``crd()``."""
    out: list[dict[str, Any]] = []
    declared = getattr(module, "crds", None)
    if callable(declared):
        declared = declared()
    if isinstance(declared, Mapping):
        declared = [declared]
    out.extend(dict(c) for c in declared or ())
    single = getattr(module, "crd", None)
    if not declared and callable(single) and not inspect.isclass(single):
        with_args = [p for p in inspect.signature(single).parameters.values()
                     if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if not with_args:
            out.append(dict(single()))
    models = _typed_resources(module)
    if models:
        from kubeloop.resources import crd

        by_kind: dict[tuple[str, str], list[type]] = {}
        for m in models:
            info = m.__resource__
            by_kind.setdefault((info.group, info.kind), []).append(m)
        known = {c.get("metadata", {}).get("name") for c in out}
        for group_models in by_kind.values():
            doc = crd(*group_models)
            if doc["metadata"]["name"] not in known:
                out.append(doc)
    return out


def _typed_resources(module: ModuleType) -> list[Any]:
    if "kubeloop.resources._model" not in sys.modules:
        return []  # the module declares none (it would have imported the typed layer)
    from kubeloop.resources import CustomResource

    return [v for v in vars(module).values() if inspect.isclass(v) and issubclass(v, CustomResource)
            and "__resource__" in v.__dict__]


async def operator_of(module: ModuleType, target: str, namespace: str, lease: tuple[str, str] | None,
                      sharding: bool = False) -> tuple[Any, Any]:
    """The module's `Operator` (controllers, informers, lease or shard Leases) and its `Webhooks`
    (None: it serves none), from an offline Manager."""
    from kubeloop.client import Client, KubeloopClientError
    from kubeloop.config import ClusterConfig
    from kubeloop.manager import Manager, WebhookOptions
    from kubeloop.resources.manifests import Operator

    client = Client(ClusterConfig(OFFLINE_SERVER, namespace=namespace))
    try:
        # webhooks registered without certificates get the Secret mode's (kept, never run)
        manager = Manager(client, namespace=namespace, webhook_options=WebhookOptions(service="offline"))
        try:
            await setup_manager(module, manager, target)
        except (KubeloopClientError, OSError) as exc:
            raise LoadError(f"{target}: setup(manager) contacted the cluster, which manifests never does ({exc}); "
                            "move that work into a runnable (manager.add_runnable)") from None
        informers = tuple((inf.resource, inf.selection.namespace) for inf in manager.informers)
        informers += tuple(manager.runnable_reads)
        return Operator(tuple(c.spec for c in manager.controllers), informers, lease,
                        namespace if sharding else None), manager.webhooks
    finally:
        await client.close()


async def _discover(kubeconfig: str, context: str | None, resources: list[str]) -> list[Any]:
    from kubeloop.client import Client
    from kubeloop.resources.manifests import Kind

    client = await Client.from_kubeconfig(kubeconfig, context)
    try:
        out = []
        for r in resources:
            api = await client.mapper.resolve(r)
            out.append(Kind(api.group, api.version, api.kind, api.plural, api.namespaced, api.subresources))
        return out
    finally:
        await client.close()


def _observe(tests: str) -> list[Any]:
    from kubeloop.testing.apiserver.rbac import AUDIT_FILE_ENV, read_audit

    with tempfile.TemporaryDirectory(prefix="kubeloop-observe-") as tmp:
        audit = Path(tmp) / "audit.jsonl"
        # the emulator records the requests: the tests run on it even where a real cluster is configured
        env = {k: v for k, v in os.environ.items() if k != "KUBELOOP_TEST_KUBECONFIG"}
        env[AUDIT_FILE_ENV] = str(audit)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *shlex.split(tests)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        click.echo(done.stdout + done.stderr, err=True, nl=False)
        if done.returncode != 0:
            raise click.ClickException(f"the observed tests failed (pytest exit code {done.returncode}): "
                                       "rules learnt from a failing run would be incomplete")
        if not audit.exists():
            raise click.ClickException(f"{tests}: no emulator recorded a request (do the tests use kubeloop.testing?)")
        return read_audit(audit.read_text().splitlines())


@click.command("manifests")
@click.argument("target", metavar="MODULE_OR_FILE")
@click.option("--namespace", "-n", default="default", show_default=True,
              help="Namespace of the ServiceAccount, Deployment and Lease.")
@click.option("--image", default=None,
              help="The operator's container image: Python 3.11+ with kubeloop and the module importable by its "
                   "dotted name, which it runs as `kubeloop run MODULE` (default: NAME-operator:latest).")
@click.option("--name", default=None, help="Name of the ServiceAccount, roles and Deployment (default: from the module).")
@click.option("--leader-election/--no-leader-election", default=True, show_default=True,
              help="Run with a Lease (and grant the Lease's rules).")
@click.option("--sharding/--no-sharding", default=False, show_default=True,
              help="Replicas share the keys (kubeloop run --sharding; implies --no-leader-election) and the "
                   "membership Leases' rules are granted.")
@click.option("--replicas", default=None, type=click.IntRange(min=1),
              help="The Deployment's replicas (default: 3 with --sharding, else 1).")
@click.option("--metrics-port", default=8080, show_default=True, type=int)
@click.option("--health-port", default=8081, show_default=True, type=int)
@click.option("--kubeconfig", default=None, help="Resolve kinds the module does not declare through this cluster.")
@click.option("--context", default=None, help="Kubeconfig context (with --kubeconfig).")
@click.option("--observe", "observe", default=None, metavar="TESTS",
              help="Learn the rules from a pytest run of TESTS (e.g. 'tests/test_op.py') instead of deriving them.")
@click.option("--observe-user", default=None,
              help="With --observe: only this user's requests (e.g. system:serviceaccount:NS:NAME).")
@click.option("--env", "env", multiple=True, metavar="NAME=VALUE",
              help="An environment variable of the operator's container (repeat for more).")
@click.option("--webhook-port", default=9443, show_default=True, type=click.IntRange(1, 65535),
              help="With webhooks: the container port the webhook server listens on (the Service maps 443 to it).")
@click.option("--webhook-cert-manager/--no-webhook-cert-manager", default=False, show_default=True,
              help="With webhooks: cert-manager issues the certificate (an Issuer and a Certificate, the "
                   "inject-ca-from annotation, the Secret mounted) instead of the operator keeping it in a Secret.")
@click.option("--webhook-migrate/--no-webhook-migrate", default=False, show_default=True,
              help="With converted resources: the operator migrates their stored objects to the storage version "
                   "(kubeloop run --webhook-migrate, and its RBAC).")
@click.option("--for-cluster", "for_cluster", default=None, metavar="CLUSTER",
              help="Print only the ServiceAccount (in --namespace) and RBAC that the cluster named CLUSTER (one the "
                   "operator reaches with its own credentials) needs: what the controllers running there and the "
                   "targets read there use.")
def manifests(target: str, namespace: str, image: str | None, name: str | None, leader_election: bool,
              sharding: bool, replicas: int | None, metrics_port: int, health_port: int, kubeconfig: str | None, context: str | None,
              observe: str | None, observe_user: str | None, env: tuple[str, ...], webhook_port: int,
              webhook_cert_manager: bool, webhook_migrate: bool, for_cluster: str | None) -> None:
    """Print the CRDs, ServiceAccount, RBAC and Deployment that install MODULE_OR_FILE's operator (and,
    when it serves webhooks, their configurations, Service and CRD conversion)."""
    from kubeloop.meta import DEFAULT_CLUSTER
    from kubeloop.resources.manifests import (
        Deployment,
        Resolver,
        UnresolvedKind,
        dns_name,
        manager_needs,
        merge,
        needs,
        needs_from_audit,
        parse_env,
        rbac_documents,
    )

    if for_cluster is not None and observe:
        raise click.ClickException("--for-cluster derives the rules; it cannot be combined with --observe")
    try:
        env_vars = parse_env(env)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None

    try:
        module = load_target(target)
        check_module(module, target)
        crds = module_crds(module)
    except LoadError as exc:
        raise click.ClickException(str(exc)) from None
    op_name = dns_name(name or default_lease_name(module))
    leader_election = leader_election and not sharding
    lease = (op_name, namespace) if leader_election else None
    try:
        op, webhooks = asyncio.run(operator_of(module, target, namespace, lease, sharding))
    except (LoadError, ManagerError) as exc:
        raise click.ClickException(str(exc)) from None
    served: Any = None  # the webhooks' documents and needs (kubeloop.webhooks.WebhookDeployment)
    if webhooks is not None:
        from kubeloop.webhooks import WebhookDeployment

        service = webhook_service_name(op_name)
        served = WebhookDeployment(webhooks, namespace, service, f"{service}-tls", port=webhook_port,
                                   cert_manager=webhook_cert_manager, migrate=webhook_migrate)
        converted = {c["metadata"]["name"]: c for c in served.crds()}  # with their conversion block
        crds = [converted.pop(c["metadata"]["name"], c) for c in crds] + list(converted.values())
    webhook_needs = served.needs() if served is not None else []
    if observe:  # what the tests did, and what the Deployment's own Lease needs (tests seldom elect)
        perms = merge([*needs_from_audit(_observe(observe), observe_user, namespace), *manager_needs(op),
                       *webhook_needs])
    else:
        resolver = Resolver(crds)
        if kubeconfig:
            missing = []
            for r in _referenced(op):
                try:
                    resolver.resolve(r)
                except UnresolvedKind:
                    missing.append(r)
            if missing:
                resolver = Resolver(crds, asyncio.run(_discover(kubeconfig, context, missing)))
        try:
            perms = merge(needs(op, resolver, for_cluster or DEFAULT_CLUSTER) +
                          (webhook_needs if for_cluster is None else []))
        except (UnresolvedKind, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
    if for_cluster is not None:
        click.echo(yaml.dump_all(rbac_documents(perms, op_name, namespace), Dumper=_Dumper, sort_keys=False,
                                 default_flow_style=False, width=120), nl=False)
        return
    dep = Deployment(op_name, namespace, image or default_image(op_name), module.__name__, metrics_port=metrics_port,
                     health_port=health_port, leader_election=leader_election, lease_name=op_name,
                     replicas=replicas or (3 if sharding else 1), sharding=sharding, env=env_vars)
    from kubeloop.resources.manifests import labels_of, selector_of
    from kubeloop.resources.manifests import manifests as documents

    services: list[dict[str, Any]] = []
    configurations: list[dict[str, Any]] = []
    if served is not None:
        dep = served.deployed(dep)
        services = served.service_documents(selector_of(op_name), labels_of(op_name))
        configurations = served.configurations()
    click.echo(yaml.dump_all(documents(perms, dep, crds, services=services, configurations=configurations),
                             Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120), nl=False)
    if image is None:
        click.echo(f"kubeloop manifests: no --image given, so the Deployment runs {dep.image!r}: build it with "
                   f"Python 3.11+, kubeloop and {module.__name__!r} importable, or pass --image", err=True)


def default_image(name: str) -> str:
    """``NAME-operator:latest``: never the bare module name, which may well be the operand's image
    (a `memcached` module manages `memcached:latest`)."""
    return f"{name if name.endswith('operator') else name + '-operator'}:latest"


class _Dumper(yaml.SafeDumper):
    """No ``&id001`` anchors: shared dicts (labels) are written out each time, as kubectl users expect."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _referenced(op: Any) -> list[str]:
    out: list[str] = []
    for spec in op.controllers:
        out += [s.resource for s in spec.sources] + list(spec.writes)
        out += [t.kind for t in spec.targets or () if t.kind.rpartition("/")[2][:1].isupper()]  # plurals need nothing
    out += [r for r, _ in op.informers]
    return out
