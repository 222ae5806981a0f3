"""Storage-version migration: rewrite a CRD's objects in its storage version, then prune
`status.storedVersions`, so that an old version can be removed from the CRD.

When a CRD's storage version changes (`v1` -> `v2`), objects already in etcd stay encoded as `v1`
until something writes them; `status.storedVersions` keeps `v1` listed, and the API server refuses
to drop `v1` from `spec.versions` while it is there. The migration (what
kube-storage-version-migrator does for any resource, and every operator otherwise writes by hand):

1. read the CRD: its storage version `S` and `status.storedVersions` (already `[S]`: nothing to do);
2. list every object through `S`, a page at a time, and update each one unchanged (a PUT of what
   was read, with its resourceVersion): the API server re-encodes it in `S` (an object already in
   `S` is a no-op for etcd). A `Conflict` means someone else wrote it since the page was read, and
   that write stored it in `S` already; `NotFound` means it is gone: both are skipped;
3. read the CRD again: if its storage version changed meanwhile, start over; otherwise set
   `status.storedVersions` to `[S]` under the CRD's resourceVersion (a conflict: read and retry).

Idempotent (a second run finds `[S]` and stops; a repeated page only repeats no-ops), resumable
(`continue_token` from a result that stopped early, or from the start again after a 410), and safe
with the operator running: it only rewrites objects as they are, and a concurrent writer wins.
Reading through `S` converts objects stored in older versions, so the conversion webhook must be
serving while it runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubeloop.client import ALL_NAMESPACES, Client, Conflict, Gone, NotFound

if TYPE_CHECKING:
    from ._certs import Stop

__all__ = ["MigrationResult", "StorageVersionMigrator", "migrate_storage_version"]

log = logging.getLogger("kubeloop.webhooks")

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


@dataclass
class MigrationResult:
    """What one `migrate_storage_version` call did."""

    crd: str
    storage_version: str = ""
    #: objects written back in the storage version
    rewritten: int = 0
    #: objects another writer changed or deleted first (already migrated by that write)
    skipped: int = 0
    #: `status.storedVersions` before and after
    stored_before: list[str] = field(default_factory=list)
    stored_after: list[str] = field(default_factory=list)
    #: set when it stopped before the end (`stop` was set): pass it back to resume
    continue_token: str | None = None

    @property
    def done(self) -> bool:
        return self.continue_token is None and self.stored_after == [self.storage_version]


def _storage(crd: Any) -> tuple[str, str, str, list[str], str]:
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or [] if v.get("storage")]
    if len(versions) != 1:
        raise ValueError(f"CRD {crd['metadata']['name']} has no single storage version")
    stored = list((crd.get("status") or {}).get("storedVersions") or [])
    return (str(spec.get("group")), str(versions[0]["name"]), str((spec.get("names") or {}).get("kind")), stored,
            str(crd["metadata"].get("resourceVersion") or ""))


async def migrate_storage_version(client: Client, crd_name: str, *, page_size: int = 500,
                                  continue_token: str | None = None, stop: Stop | None = None) -> MigrationResult:
    """Migrate every object of CRD `crd_name` to its storage version, then prune its storedVersions.

    Stops early (with `continue_token` set) when `stop` is set between two objects.
    """
    result = MigrationResult(crd_name)
    token = continue_token
    for _ in range(10):  # restarts when the storage version changes under us
        crd = await client.get(CRD, crd_name)
        group, storage, kind, stored, _ = _storage(crd)
        result.storage_version = storage
        result.stored_before = result.stored_before or stored
        if stored == [storage]:
            result.stored_after = stored
            return result
        ref = f"{group}/{storage}/{kind}"
        while True:
            try:
                page = await client.list_page(ref, namespace=ALL_NAMESPACES, limit=page_size, continue_token=token)
            except Gone:
                log.info("migrating %s: the list's continue token expired; starting over (no-op rewrites)", crd_name)
                token = None
                continue
            for obj in page.items:
                if stop is not None and stop.is_set():
                    result.continue_token = token or ""
                    return result
                try:
                    await client.replace(obj)
                    result.rewritten += 1
                except (Conflict, NotFound):
                    result.skipped += 1
            token = page.continue_token
            if not token:
                break
        if await _prune(client, crd_name, storage, result):
            log.info("migrated %s to %s: %d rewritten, %d written by others; storedVersions %s -> %s", crd_name,
                     storage, result.rewritten, result.skipped, result.stored_before, result.stored_after)
            return result
    raise RuntimeError(f"migrating {crd_name}: its storage version kept changing (10 attempts)")


async def _prune(client: Client, crd_name: str, storage: str, result: MigrationResult) -> bool:
    """Set storedVersions to [storage]; False when the storage version changed (migrate again)."""
    for _ in range(5):
        crd = await client.get(CRD, crd_name)
        _, now_storage, _, stored, rv = _storage(crd)
        if now_storage != storage:
            return False
        if stored != [storage]:
            try:
                await client.patch(CRD, crd_name, {"metadata": {"resourceVersion": rv},
                                                   "status": {"storedVersions": [storage]}}, subresource="status")
            except Conflict:
                continue
        result.stored_after = [storage]
        return True
    raise RuntimeError(f"migrating {crd_name}: the CRD kept changing while pruning storedVersions")


class StorageVersionMigrator:
    """A runnable migrating `crds` once at start, then whenever asked again (`poll_interval` seconds,
    or never with None): each CRD whose storedVersions lists more than its storage version.

    Leader-only (`needs_leader`): it is safe on every replica, but one is enough.
    """

    needs_leader = True

    def __init__(self, client: Client, crds: Sequence[str], *, page_size: int = 500,
                 poll_interval: float | None = 3600.0) -> None:
        self.client = client
        self.crds = tuple(crds)
        self.page_size = page_size
        self.poll_interval = poll_interval
        self.results: dict[str, MigrationResult] = {}

    @property
    def ready(self) -> bool:
        return all(r.done for r in self.results.values()) and len(self.results) == len(self.crds)

    async def run(self, stop: Stop) -> None:
        while not stop.is_set():
            for name in self.crds:
                previous = self.results.get(name)
                token = previous.continue_token if previous is not None else None
                try:
                    self.results[name] = await migrate_storage_version(
                        self.client, name, page_size=self.page_size, continue_token=token, stop=stop)
                except NotFound:
                    log.info("storage-version migration: CRD %s is not installed", name)
                except Exception:
                    log.exception("storage-version migration of %s failed; retrying later", name)
            if self.poll_interval is None:
                await stop.wait()
                return
            try:
                async with asyncio.timeout(self.poll_interval):
                    await stop.wait()
            except TimeoutError:
                pass
