"""Generic `metadata` rules every kind shares: names, labels, annotations, owner references.

These are kube-apiserver's ObjectMeta validations (apimachinery `ValidateObjectMeta`), applied by the
generic registry flow before the per-kind `Strategy` validation. The messages follow the real ones.
"""

from __future__ import annotations

import datetime
import random
import re
import string
import uuid
from typing import Any

from .errors import cause

Obj = dict[str, Any]

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LVALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
              "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


_GEN_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # kube's generator alphabet (no vowels, no confusables)


def generate_name(prefix: str) -> str:
    """`generateName` + 5 random characters; the prefix is cut to 58 so the name fits 63."""
    return prefix[:58] + "".join(random.choice(_GEN_CHARS) for _ in range(5))


def invalid_value(field: str, value: Any, msg: str) -> dict[str, str]:
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    return cause("FieldValueInvalid", f"Invalid value: {shown}: {msg}", field)


def validate_name(name: str, field: str = "metadata.name", dns_label: bool = False) -> list[dict[str, str]]:
    if dns_label:
        if len(name) > 63:
            return [invalid_value(field, name, "must be no more than 63 characters")]
        if not _DNS1123_LABEL.match(name):
            return [invalid_value(field, name, LABEL_MSG)]
        return []
    if len(name) > 253:
        return [invalid_value(field, name, "must be no more than 253 characters")]
    if not _DNS1123_SUBDOMAIN.match(name):
        return [invalid_value(field, name, SUBDOMAIN_MSG)]
    return []


def _qualified_name_errors(key: str, field: str) -> list[dict[str, str]]:
    if not isinstance(key, str) or not key:
        return [invalid_value(field, key, "name part must be non-empty")]
    prefix, _, name = key.rpartition("/")
    errs: list[dict[str, str]] = []
    if "/" in key:
        if not prefix:
            errs.append(invalid_value(field, key, "prefix part must be non-empty"))
        elif len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            errs.append(invalid_value(field, key, "prefix part " + SUBDOMAIN_MSG))
    if not name:
        errs.append(invalid_value(field, key, "name part must be non-empty"))
    elif len(name) > 63:
        errs.append(invalid_value(field, key, "name part must be no more than 63 characters"))
    elif not _QUALIFIED_NAME.match(name):
        errs.append(invalid_value(field, key, QNAME_MSG))
    return errs


def validate_meta(meta: Obj, *, namespaced: bool, dns_label_name: bool = False) -> list[dict[str, str]]:
    """The ObjectMeta validation causes (empty when valid)."""
    errs: list[dict[str, str]] = []
    name = meta.get("name")
    if isinstance(name, str) and name:
        errs += validate_name(name, dns_label=dns_label_name)
    gen = meta.get("generateName")
    if isinstance(gen, str) and gen and not name:
        pass
    labels = meta.get("labels")
    if isinstance(labels, dict):
        for k, v in labels.items():
            errs += [dict(c, field="metadata.labels") for c in _qualified_name_errors(k, "metadata.labels")]
            if not isinstance(v, str):
                continue
            if len(v) > 63:
                errs.append(invalid_value("metadata.labels", v, "must be no more than 63 characters"))
            elif not _LABEL_VALUE.match(v):
                errs.append(invalid_value("metadata.labels", v, LVALUE_MSG))
    ann = meta.get("annotations")
    if isinstance(ann, dict):
        for k in ann:
            errs += _qualified_name_errors(k, "metadata.annotations")
        total = sum(len(k) + len(v) for k, v in ann.items() if isinstance(v, str))
        if total > 256 * 1024:
            errs.append(cause("FieldValueTooLong", "Too long: must have at most 262144 bytes",
                              "metadata.annotations"))
    refs = meta.get("ownerReferences")
    if isinstance(refs, list):
        controllers = 0
        for ref in refs:
            if not isinstance(ref, dict):
                continue
            for f in ("apiVersion", "kind", "name"):
                if not ref.get(f):
                    errs.append(invalid_value(f"metadata.ownerReferences.{f}", ref.get(f, ""),
                                              f"{f} must not be empty"))
            if not ref.get("uid"):
                errs.append(invalid_value("metadata.ownerReferences.uid", ref.get("uid", ""),
                                          "uid must not be empty"))
            if ref.get("controller"):
                controllers += 1
        if controllers > 1:
            errs.append(invalid_value("metadata.ownerReferences", refs,
                                      "Only one reference can have Controller set to true"))
    fins = meta.get("finalizers")
    if isinstance(fins, list):
        for f in fins:
            if isinstance(f, str) and "/" not in f and f not in (
                    "kubernetes", "orphan", "foregroundDeletion") and not _DNS1123_SUBDOMAIN.match(f):
                errs.append(invalid_value("metadata.finalizers", f, "name is neither a standard finalizer name "
                                          "nor is it fully qualified"))
    return errs


def random_suffix(n: int = 5) -> str:
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(n))
