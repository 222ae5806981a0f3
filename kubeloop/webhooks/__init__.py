"""Admission and conversion webhooks over typed objects, served over HTTPS with certificates that
manage themselves, and storage-version migration.

    from kubeloop.webhooks import AdmissionRequest, Webhooks, allow, deny

    webhooks = Webhooks("widgets")

    @webhooks.validating(Widget)
    def names(req: AdmissionRequest[Widget]) -> Verdict: ...

    webhooks.conversion(VERSIONS)                    # kubeloop.resources.Versions

    certificates = SecretCertificates(client, "ops", "widgets-webhook-tls", service_hosts("ops", "widgets"),
                                      configurations=[webhooks.name], crds=webhooks.crd_names)
    server = WebhookServer(webhooks, certificates)   # runnables: `await x.run(stop)`

    manager.add_webhooks(webhooks)                   # or: the Manager runs both (kubeloop.manager)

`install`/`installed` put the configurations and CRDs in a cluster for a run and put the cluster
back after (the dev loop); `WebhookDeployment` is what `kubeloop manifests` adds for webhooks.

Layer: below `resources` (handlers take its typed objects, conversion uses its `Versions`), above
`manager` (which runs the server and the certificate source as runnables). The certificate
sources need `cryptography`: `pip install 'kubeloop[webhooks]'` (typed handlers and conversion
need pydantic too, which that extra includes). `import kubeloop` never imports this package.
"""

from __future__ import annotations

from ._admission import AdmissionWebhook, Answer, ClientConfig, label_selector_dict
from ._conversion import Converter
from ._install import Installation, install, installed
from ._migration import MigrationResult, StorageVersionMigrator, migrate_storage_version
from ._patch import diff, rebase
from ._review import AdmissionRequest, GroupVersionKind, GroupVersionResource, UserInfo, Verdict, allow, deny
from ._server import DEFAULT_PORT, WebhookServer
from ._webhooks import CONVERT_PATH, Webhooks

try:
    from ._certs import (
        CERT_MANAGER_INJECT_ANNOTATION,
        CertificateBundle,
        CertificateSource,
        DirectoryCertificates,
        EphemeralCertificates,
        service_hosts,
    )
    from ._manifests import CERT_DIR, WebhookDeployment
    from ._secret import SecretCertificates, inject_ca_bundle
except ModuleNotFoundError as e:  # pragma: no cover - the extra is installed in development
    if e.name and e.name.split(".")[0] == "cryptography":
        raise ImportError("kubeloop.webhooks needs cryptography: pip install 'kubeloop[webhooks]'") from e
    raise

__all__ = [
    "CERT_DIR", "CERT_MANAGER_INJECT_ANNOTATION", "CONVERT_PATH", "DEFAULT_PORT", "AdmissionRequest", "AdmissionWebhook", "Answer",
    "CertificateBundle", "CertificateSource", "ClientConfig", "Converter", "DirectoryCertificates",
    "EphemeralCertificates", "GroupVersionKind", "GroupVersionResource", "Installation", "MigrationResult", "SecretCertificates",
    "StorageVersionMigrator", "UserInfo", "Verdict", "WebhookDeployment", "WebhookServer", "Webhooks", "allow", "deny", "diff",
    "inject_ca_bundle", "install", "installed", "label_selector_dict", "migrate_storage_version", "rebase", "service_hosts",
]
