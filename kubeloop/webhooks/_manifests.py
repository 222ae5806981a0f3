"""What `kubeloop manifests` adds for an operator that serves webhooks (pure: documents and RBAC
needs, no I/O).

- the webhook Service (443 -> the container's ``webhook`` port), selecting the operator's pods,
  ready or not (``publishNotReadyAddresses``: a pod's ``/readyz`` waits for its caches, and
  listing a custom resource through another version than it is stored in goes through the
  conversion webhook, which must be reachable for the pod to become ready);
- the Validating/MutatingWebhookConfigurations and each converted resource's CRD with its
  ``conversion: Webhook`` block, all calling that Service;
- certificates, in one of two modes:
  - by the operator itself (`SecretCertificates`, the default): RBAC for its Secret (create in
    the namespace; get and update by name) and for injecting the CA bundle (get and update the two
    configurations and the CRDs, by name); the Deployment runs ``kubeloop run --webhook-service S
    --webhook-secret T``;
  - cert-manager (``cert_manager=True``): a self-signed `Issuer` and a `Certificate` for the
    Service's names, the annotation ``cert-manager.io/inject-ca-from`` on the configurations and
    the CRDs (cert-manager's CA injector fills ``caBundle``), and the Certificate's Secret mounted
    where ``kubeloop run --webhook-cert-dir`` reads it; no RBAC for certificates;
- with ``migrate``: the storage-version migration's RBAC (list and update the converted kinds in
  every namespace; get the CRDs and update/patch their status, by name) and ``--webhook-migrate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubeloop.resources.manifests import Need

from ._admission import ClientConfig
from ._certs import CERT_MANAGER_INJECT_ANNOTATION, service_hosts
from ._webhooks import Webhooks

if TYPE_CHECKING:
    from kubeloop.resources.manifests import Deployment

__all__ = ["CERT_DIR", "WebhookDeployment"]

#: where the cert-manager mode mounts the Certificate's Secret (controller-runtime's default CertDir)
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
CERT_MANAGER_API = "cert-manager.io/v1"
ADMISSION = "admissionregistration.k8s.io"
APIEXTENSIONS = "apiextensions.k8s.io"


@dataclass(frozen=True)
class WebhookDeployment:
    """How an operator's `Webhooks` are deployed: in `namespace`, behind Service `service`, the
    certificate in Secret `secret`, served on `port`; `cert_manager` and `migrate` as the module
    docstring says."""

    webhooks: Webhooks
    namespace: str
    service: str
    secret: str
    port: int = 9443
    cert_manager: bool = False
    migrate: bool = False

    @property
    def client_config(self) -> ClientConfig:
        """How the API server calls the webhooks: the Service on 443, no CA bundle (it is injected)."""
        return ClientConfig(service_namespace=self.namespace, service_name=self.service, service_port=443)

    @property
    def certificate(self) -> str:
        """The cert-manager Certificate's name (and that of its Issuer)."""
        return self.service

    def _annotated(self, doc: dict[str, Any]) -> dict[str, Any]:
        if self.cert_manager:
            annotations = doc["metadata"].setdefault("annotations", {})
            annotations[CERT_MANAGER_INJECT_ANNOTATION] = f"{self.namespace}/{self.certificate}"
        return doc

    def crds(self) -> list[dict[str, Any]]:
        """Each converted resource's CRD, with its conversion webhook at the Service."""
        return [self._annotated(c) for c in self.webhooks.crds(self.client_config)]

    def configurations(self) -> list[dict[str, Any]]:
        """The Validating/MutatingWebhookConfigurations, calling the Service."""
        return [self._annotated(c) for c in self.webhooks.configurations(self.client_config)]

    def service_documents(self, selector: dict[str, str], labels: dict[str, str]) -> list[dict[str, Any]]:
        """The Service, and in cert-manager mode its Issuer and Certificate."""
        docs: list[dict[str, Any]] = [{
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": self.service, "namespace": self.namespace, "labels": labels},
            "spec": {"selector": selector, "publishNotReadyAddresses": True,
                     "ports": [{"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}]},
        }]
        if self.cert_manager:
            meta = {"name": self.certificate, "namespace": self.namespace, "labels": labels}
            docs.append({"apiVersion": CERT_MANAGER_API, "kind": "Issuer", "metadata": meta,
                         "spec": {"selfSigned": {}}})
            docs.append({"apiVersion": CERT_MANAGER_API, "kind": "Certificate", "metadata": meta,
                         "spec": {"secretName": self.secret, "dnsNames": service_hosts(self.namespace, self.service),
                                  "issuerRef": {"kind": "Issuer", "name": self.certificate}}})
        return docs

    def needs(self) -> list[Need]:
        """The RBAC the certificates (unless cert-manager keeps them) and the migration need."""
        out: list[Need] = []
        crd_names = tuple(self.webhooks.crd_names)
        if not self.cert_manager:
            out.append(Need("", "secrets", frozenset({"get", "update"}), self.namespace, (self.secret,)))
            out.append(Need("", "secrets", frozenset({"create"}), self.namespace))
            if self.webhooks.admission:  # both kinds are checked by name, whichever this set uses
                for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
                    out.append(Need(ADMISSION, plural, frozenset({"get", "update"}), None, (self.webhooks.name,)))
            if crd_names:
                out.append(Need(APIEXTENSIONS, "customresourcedefinitions", frozenset({"get", "update"}), None,
                                crd_names))
        if self.migrate and crd_names:
            out.append(Need(APIEXTENSIONS, "customresourcedefinitions", frozenset({"get"}), None, crd_names))
            out.append(Need(APIEXTENSIONS, "customresourcedefinitions/status", frozenset({"update", "patch"}), None,
                            crd_names))
            for versions in self.webhooks.converter.resources:
                info = versions.info
                out.append(Need(info.group, info.plural, frozenset({"list", "update"}), None))
        return out

    def args(self) -> tuple[str, ...]:
        """`kubeloop run`'s webhook flags in the Deployment."""
        out = ["--webhook-port", str(self.port)]
        if self.cert_manager:
            out += ["--webhook-cert-dir", CERT_DIR]
        else:
            out += ["--webhook-service", self.service, "--webhook-secret", self.secret]
        if self.migrate:
            out.append("--webhook-migrate")
        return tuple(out)

    def deployed(self, deployment: Deployment) -> Deployment:
        """`deployment` serving the webhooks: their port, flags and (cert-manager) the Secret mount."""
        import dataclasses

        return dataclasses.replace(deployment, webhook_port=self.port, args=(*deployment.args, *self.args()),
                                   secret_mounts=(*deployment.secret_mounts, *(
                                       ((self.secret, CERT_DIR),) if self.cert_manager else ())))
