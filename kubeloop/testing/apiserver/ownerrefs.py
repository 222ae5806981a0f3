"""What kube-apiserver 1.24's write handlers do to `metadata.ownerReferences` before storing: an
entry equal to an earlier one (same uid and the same in every field) is dropped, with a Warning
header naming the duplicate uids. Create and update handlers do it before the field manager
records the write; the patch handler (server-side apply included) only after it, with another text."""

from __future__ import annotations

from . import apiwarnings
from .govalues import TYPED, equal
from .shapes import Obj

BEFORE = (".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, "
          "and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}")
AFTER = (".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups "
         "owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; "
         "duplicate UID(s) observed: {}")


def dedup(obj: Obj, after_admission: bool = False) -> None:
    """`dedupOwnerReferencesAndAddWarning`."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list) or len(refs) < 2:
        return
    kept: list[object] = []
    seen: set[object] = set()
    duplicates: list[str] = []
    for ref in refs:
        uid = ref.get("uid") if isinstance(ref, dict) else None
        if uid not in seen or not any(equal(ref, k, TYPED) for k in kept):
            seen.add(uid)
            kept.append(ref)
        else:
            duplicates.append(str(uid))
    if duplicates:
        apiwarnings.add((AFTER if after_admission else BEFORE).format(", ".join(duplicates)))
        meta["ownerReferences"] = kept  # type: ignore[index]
