"""`ListOptions` validation for lists and watches, as the emulated version does it.

kube-apiserver 1.24 (`ValidateListOptions`) collects every problem of `resourceVersionMatch`
before answering 422: forbidden on a watch, without a `resourceVersion`, with a `continue`, an
unsupported value, `Exact` with `resourceVersion=0`. `sendInitialEvents` does not exist in 1.24 (the
query parameter is ignored); with the `WatchList` feature gate on, the rules of the versions that
have streaming lists apply instead (`sendInitialEvents` needs `resourceVersionMatch=NotOlderThan`
and bookmarks, and is forbidden on a list).
"""

from __future__ import annotations

from collections.abc import Mapping

from .errors import StatusError, cause
from .features import FeatureGates


def _truthy(v: str | None) -> bool:
    return (v or "").lower() in ("1", "true", "yes")


def send_initial_events(query: Mapping[str, str], gates: FeatureGates) -> bool | None:
    """`sendInitialEvents` as the server understands it: None when absent, or when the emulated
    version does not know the parameter (the WatchList gate off)."""
    if not gates.enabled("WatchList") or "sendInitialEvents" not in query:
        return None
    return _truthy(query.get("sendInitialEvents"))


def validate(query: Mapping[str, str], *, watch: bool, gates: FeatureGates) -> None:
    """Raise the 422 the emulated version answers for invalid list/watch options (all causes)."""
    causes: list[tuple[str, str, str]] = []  # (reason, field, message)
    match = query.get("resourceVersionMatch", "")
    rv = query.get("resourceVersion", "")
    send = send_initial_events(query, gates)
    if watch and gates.enabled("WatchList"):
        if send is not None:
            if match != "NotOlderThan":
                causes.append(("FieldValueForbidden", "resourceVersionMatch",
                               "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
            if not _truthy(query.get("allowWatchBookmarks")):
                causes.append(("FieldValueForbidden", "allowWatchBookmarks",
                               "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true"))
        if match:
            if send is None:
                causes.append(("FieldValueForbidden", "resourceVersionMatch",
                               "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents "
                               "is provided"))
            if match != "NotOlderThan":
                causes.append(("FieldValueNotSupported", "resourceVersionMatch",
                               f'Unsupported value: "{match}": supported values: "NotOlderThan"'))
            if query.get("continue"):
                causes.append(("FieldValueForbidden", "resourceVersionMatch",
                               "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
    else:
        if not watch and send is not None:
            causes.append(("FieldValueForbidden", "sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list"))
        if match:
            if watch:
                causes.append(("FieldValueForbidden", "resourceVersionMatch",
                               "Forbidden: resourceVersionMatch is forbidden for watch"))
            if not rv:
                causes.append(("FieldValueForbidden", "resourceVersionMatch",
                               "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"))
            if query.get("continue"):
                causes.append(("FieldValueForbidden", "resourceVersionMatch",
                               "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
            if match not in ("Exact", "NotOlderThan"):
                causes.append(("FieldValueNotSupported", "resourceVersionMatch",
                               f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""'))
            if match == "Exact" and rv == "0":
                causes.append(("FieldValueForbidden", "resourceVersionMatch",
                               'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if causes:
        texts = [f"{f}: {m}" for _r, f, m in causes]
        text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        raise StatusError(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {text}',
                          {"group": "meta.k8s.io", "kind": "ListOptions",
                           "causes": [cause(r, m, f) for r, f, m in causes]})
