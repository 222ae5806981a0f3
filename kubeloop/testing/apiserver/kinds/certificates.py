"""certificates.k8s.io/v1 CertificateSigningRequest with its `/status` and `/approval` subresources.

A create records who asked (`spec.username`, `uid`, `groups`, `extra` from the authenticated
caller). The main resource can change metadata only; `/approval` changes the Approved and Denied
conditions (stamping their times); `/status` changes the certificate and the other conditions,
never Approved or Denied. Nothing signs: the emulator has no signer, as a cluster has none for a
signer name it does not know.
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

from ..authn import CURRENT_USER
from ..objectmeta import now_rfc3339
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .extra import GenericStrategy

USAGES = ("any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment",
          "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system",
          "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc",
          "ocsp signing", "s/mime", "server auth", "signing", "timestamping")
APPROVAL_TYPES = ("Approved", "Denied")
FINAL_TYPES = ("Approved", "Denied", "Failed")


def _go_bytes(data: bytes) -> str:
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def _pem_blocks(data: bytes, kind: str) -> list[bytes]:
    begin, end = f"-----BEGIN {kind}-----".encode(), f"-----END {kind}-----".encode()
    blocks, rest = [], data
    while begin in rest and end in rest:
        start = rest.index(begin) + len(begin)
        stop = rest.index(end, start)
        blocks.append(rest[start:stop])
        rest = rest[stop + len(end):]
    return blocks


def _decode_b64(value: Any) -> bytes:
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        return b""


def request_error(request: bytes) -> str:
    """What `validateCSR` says of `spec.request` ("" when it is a PEM CERTIFICATE REQUEST)."""
    blocks = _pem_blocks(request, "CERTIFICATE REQUEST")
    if not blocks:
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        from cryptography import x509
    except ImportError:  # pragma: no cover - the testing extra installs it
        return ""
    try:
        csr = x509.load_pem_x509_csr(request)
    except ValueError as e:
        return f"asn1: {e}"
    return "" if csr.is_signature_valid else "x509: ECDSA verification failure"


def signer_name_causes(signer: str, fld: str) -> list[Cause]:
    if not signer:
        return [m.required_cause(fld, "signerName must be provided")]
    parts = signer.split("/")
    if len(parts) != 2:
        return [m.invalid_cause(fld, signer, "must be a fully qualified domain and path of the form "
                                             "'example.com/signer-name'")]
    causes: list[Cause] = []
    domain, path = parts
    labels = domain.split(".")
    for label in labels:
        errs = m.name_is_dns_label(label, False)
        if errs:
            causes += [m.invalid_cause(fld, domain, f"validating label {m.go_repr(label)}: {e}") for e in errs]
            break
    if len(labels) < 2:
        causes.append(m.invalid_cause(fld, domain, "should be a domain with at least two segments separated by dots"))
    for label in path.split("."):
        errs = m.name_is_dns_subdomain(label, False)
        if errs:
            causes += [m.invalid_cause(fld, path, f"validating label {m.go_repr(label)}: {e}") for e in errs]
            break
    return causes


def _conditions_causes(conditions: Any, allow_both: bool) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    approved = denied = False
    for i, c in enumerate(conditions or []):
        c = c if isinstance(c, dict) else {}
        fld = f"status.conditions[{i}]"
        kind, status = c.get("type") or "", c.get("status") or ""
        if not kind:
            causes.append(m.required_cause(f"{fld}.type"))
        if not status:
            causes.append(m.required_cause(f"{fld}.status"))
        elif status not in ("True", "False", "Unknown"):
            causes.append(m.not_supported_cause(f"{fld}.status", status, ("False", "True", "Unknown")))
        if kind in FINAL_TYPES:
            if kind in seen:
                causes.append(m.duplicate_cause(f"{fld}.type", kind))
            seen.add(kind)
        if not allow_both:
            if kind == "Approved":
                approved = True
                if denied:
                    causes.append(m.invalid_cause(f"{fld}.type", kind,
                                                  "Approved and Denied conditions are mutually exclusive"))
            elif kind == "Denied":
                denied = True
                if approved:
                    causes.append(m.invalid_cause(f"{fld}.type", kind,
                                                  "Approved and Denied conditions are mutually exclusive"))
    return causes


def _certificate_error(cert: Any) -> str:
    if not cert:
        return ""
    data = _decode_b64(cert)
    if not _pem_blocks(data, "CERTIFICATE"):
        return "must contain at least one CERTIFICATE PEM block"
    return ""


def _of_type(conditions: Any, kinds: tuple[str, ...]) -> list[Obj]:
    return [c for c in conditions or [] if isinstance(c, dict) and c.get("type") in kinds]


def _stamp(new_conditions: Any, old_conditions: Any) -> None:
    """`populateConditionTimestamps`: new conditions get now; an unchanged status keeps its transition time."""
    now = now_rfc3339()
    old_by_type = {c.get("type"): c for c in old_conditions or [] if isinstance(c, dict)}
    for c in new_conditions or []:
        if not isinstance(c, dict):
            continue
        if not c.get("lastUpdateTime"):
            c["lastUpdateTime"] = now
        if not c.get("lastTransitionTime"):
            old = old_by_type.get(c.get("type"))
            same = old is not None and old.get("status") == c.get("status") and old.get("lastTransitionTime")
            c["lastTransitionTime"] = old["lastTransitionTime"] if same and old else now


class CertificateSigningRequestStrategy(GenericStrategy):
    records_managed_fields = False  # as recorded: 1.24 keeps no managedFields on a CSR

    def __init__(self) -> None:
        super().__init__(status={}, name_fn=lambda name, prefix: [])

    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
        user = CURRENT_USER.get()
        if user is not None:
            spec["username"] = user.name
            if user.uid:
                spec["uid"] = user.uid
            if user.groups:
                spec["groups"] = list(user.groups)
            if user.extra:
                spec["extra"] = copy.deepcopy(user.extra)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return self._causes(obj, allow_both=False)

    def _causes(self, obj: Obj, allow_both: bool, legacy_ok: bool = False) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        request = _decode_b64(spec.get("request"))
        err = request_error(request)
        if err:
            causes.append(m.invalid_cause_raw("spec.request", _go_bytes(request), err))
        usages = spec.get("usages") or []
        if not usages:
            causes.append(m.required_cause("spec.usages", "usages must be provided"))
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage not in USAGES:
                causes.append(m.not_supported_cause(f"spec.usages[{i}]", usage, USAGES))
        for i, usage in enumerate(usages):
            if usage in seen:
                causes.append(m.duplicate_cause(f"spec.usages[{i}]", usage))
            seen.add(usage)
        signer = spec.get("signerName") or ""
        if signer == "kubernetes.io/legacy-unknown" and not legacy_ok:
            causes.append(m.invalid_cause("spec.signerName", signer,
                                          "the legacy signerName is not allowed via this API version"))
        else:
            causes += signer_name_causes(signer, "spec.signerName")
        seconds = spec.get("expirationSeconds")
        if isinstance(seconds, int) and seconds < 600:
            causes.append(m.invalid_cause("spec.expirationSeconds", seconds,
                                          "may not specify a duration less than 600 seconds (10 minutes)"))
        causes += _conditions_causes((obj.get("status") or {}).get("conditions"), allow_both)
        cert_err = _certificate_error((obj.get("status") or {}).get("certificate"))
        if cert_err:
            causes.append(m.invalid_cause("status.certificate", "<certificate data>", cert_err))
        return causes

    # the main resource changes metadata only
    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        for key in ("spec", "status"):
            if key in old:
                new[key] = copy.deepcopy(old[key])
            else:
                new.pop(key, None)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        return self._update_causes(new, old, approval=False, certificate=False)

    def _update_causes(self, new: Obj, old: Obj, *, approval: bool, certificate: bool) -> list[Cause]:
        """`validateCertificateSigningRequestUpdate` with the subresource's options."""
        old_conditions = (old.get("status") or {}).get("conditions")
        new_conditions = (new.get("status") or {}).get("conditions")
        allow_both = bool(_of_type(old_conditions, ("Approved",))) and bool(_of_type(old_conditions, ("Denied",)))
        causes = self._causes(new, allow_both, legacy_ok=True)
        for kind in FINAL_TYPES:
            if len(_of_type(new_conditions, (kind,))) < len(_of_type(old_conditions, (kind,))):
                causes.append(m.forbidden_cause("status.conditions",
                                                f"updates may not remove a condition of type {m.go_repr(kind)}"))
        if not approval:
            for kind in APPROVAL_TYPES:
                before, after = _of_type(old_conditions, (kind,)), _of_type(new_conditions, (kind,))
                if len(after) > len(before):
                    causes.append(m.forbidden_cause("status.conditions",
                                                    f"updates may not add a condition of type {m.go_repr(kind)}"))
                elif len(after) == len(before) and after != before:
                    causes.append(m.forbidden_cause("status.conditions",
                                                    f"updates may not modify a condition of type {m.go_repr(kind)}"))
        new_cert, old_cert = (new.get("status") or {}).get("certificate"), (old.get("status") or {}).get("certificate")
        if (new_cert or "") != (old_cert or ""):
            if not certificate:
                causes.append(m.forbidden_cause("status.certificate", "updates may not set certificate content"))
            elif old_cert:
                causes.append(m.forbidden_cause("status.certificate",
                                                "updates may not modify existing certificate content"))
        return causes + m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})

    def prepare_for_subresource_update(self, info: ServedResource, subresource: str, new: Obj, old: Obj) -> None:
        if subresource not in ("status", "approval"):
            super().prepare_for_subresource_update(info, subresource, new, old)
            return
        self.prepare_for_status_update(info, new, old)
        if not isinstance(new.get("status"), dict):
            new["status"] = {}
        status, old_status = new["status"], old.get("status") or {}
        _stamp(status.get("conditions"), old_status.get("conditions"))
        if subresource == "approval":
            # only the conditions come from the request (csrApprovalStrategy.PrepareForUpdate)
            conditions = status.get("conditions")
            new["status"] = status = copy.deepcopy(old_status)
            if conditions is None:
                status.pop("conditions", None)
            else:
                status["conditions"] = conditions
        else:
            # Approved and Denied stay as they were, unless some were added or removed
            # (csrStatusStrategy.PrepareForUpdate's preserveConditionInstances)
            conditions = status.get("conditions") or []
            for kind in APPROVAL_TYPES:
                old_at = [i for i, c in enumerate(old_status.get("conditions") or []) if c.get("type") == kind]
                new_at = [i for i, c in enumerate(conditions) if isinstance(c, dict) and c.get("type") == kind]
                if len(old_at) == len(new_at):
                    for i, j in zip(old_at, new_at, strict=True):
                        conditions[j] = copy.deepcopy(old_status["conditions"][i])

    def validate_subresource_update(self, info: ServedResource, subresource: str, new: Obj, old: Obj) -> None:
        if subresource in ("status", "approval"):
            m.raise_invalid(info, new, self._update_causes(new, old, approval=subresource == "approval",
                                                           certificate=subresource == "status"))
        else:
            super().validate_subresource_update(info, subresource, new, old)
