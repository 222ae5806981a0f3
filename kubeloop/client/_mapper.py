"""The RESTMapper: kind <-> plural resource, scope and subresources, from discovery.

One group/version's resource list is fetched the first time a kind in it is used and cached; a miss
fetches it again (so CRDs created after start-up resolve), and only then is `UnknownResource` raised.
A kind missing from a served built-in group/version (the core group or a group without a dot, which
CRDs cannot use) raises `UnknownKind` with the closest names: it is a typo, not a CRD still to come.
In a CRD group, a kind within an edit or two of a served one (``Memcache`` where ``Memcached`` is
served) raises `UnknownKind` too, naming it; anything else may be a CRD still to be installed.
Concurrent lookups of one group/version share a single discovery request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from kubeloop.client._errors import NotFound, UnknownKind, UnknownResource
from kubeloop.client._resources import ApiResource, ResourceLike, ResourceRef

Fetch = Callable[[str], Awaitable[dict[str, Any]]]


def parse_resource_list(group: str, version: str, body: dict[str, Any]) -> dict[str, ApiResource]:
    """An `APIResourceList` body -> resources keyed by plural name (subresources folded in)."""
    subs: dict[str, set[str]] = {}
    raw: list[dict[str, Any]] = []
    for r in body.get("resources") or []:
        name = str(r.get("name", ""))
        if "/" in name:
            parent, _, sub = name.partition("/")
            subs.setdefault(parent, set()).add(sub)
        else:
            raw.append(r)
    out: dict[str, ApiResource] = {}
    for r in raw:
        name = str(r["name"])
        out[name] = ApiResource(
            group=str(r.get("group") or group),
            version=str(r.get("version") or version),
            kind=str(r.get("kind", "")),
            plural=name,
            namespaced=bool(r.get("namespaced")),
            verbs=frozenset(r.get("verbs") or ()),
            subresources=frozenset(subs.get(name, ())),
            singular=str(r.get("singularName") or ""),
            short_names=tuple(r.get("shortNames") or ()),
            list_kind=f"{r.get('kind', '')}List",
        )
    return out


def _distance(a: str, b: str, limit: int) -> int:
    """Edit distance (insertions, deletions, substitutions, adjacent swaps), or ``limit + 1`` once
    it is certain to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return prev[-1]


def misspelt_kind(name: str, kinds: Mapping[str, Iterable[str]]) -> str | None:
    """The kind ``name`` is a typo of, among ``kinds`` (kind -> its names: kind, plural, singular),
    if one is that close: within one edit (two for names of 8 characters or more), ignoring case.

    Closer than `difflib`'s ratio on purpose: in a CRD group a kind not served yet may be a CRD
    still to be installed, and only a near miss (``Memcache`` for ``Memcached``) is a typo.
    """
    low = name.lower()
    limit = 2 if len(low) >= 8 else 1
    best: tuple[int, str] | None = None
    for kind, names in kinds.items():
        for cand in {n.lower() for n in names if n}:
            d = _distance(low, cand, limit)
            if d <= limit and (best is None or (d, kind) < best):
                best = (d, kind)
    return best[1] if best is not None else None


class _GroupVersion:
    __slots__ = ("by_kind", "by_name")

    def __init__(self, resources: dict[str, ApiResource]) -> None:
        self.by_name = resources
        self.by_kind: dict[str, ApiResource] = {}
        for r in resources.values():
            self.by_kind.setdefault(r.kind, r)

    def find(self, name: str) -> ApiResource | None:
        r = self.by_kind.get(name) or self.by_name.get(name)
        if r is None:
            low = name.lower()
            for cand in self.by_name.values():
                if low in (cand.plural, cand.singular, cand.kind.lower()) or low in cand.short_names:
                    return cand
        return r


class RESTMapper:
    """Resolves `ResourceRef`s through discovery, cached per client."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch  # GET a discovery path, return the decoded body
        self._cache: dict[tuple[str, str], _GroupVersion] = {}
        self._inflight: dict[tuple[str, str], asyncio.Future[_GroupVersion | None]] = {}

    def cached(self, ref: ResourceRef) -> ApiResource | None:
        gv = self._cache.get((ref.group, ref.version))
        return gv.find(ref.name) if gv is not None else None

    def invalidate(self, group: str | None = None, version: str | None = None) -> None:
        """Forget discovery for one group/version, or everything."""
        if group is None:
            self._cache.clear()
        else:
            self._cache = {k: v for k, v in self._cache.items() if not (k[0] == group and (version is None or k[1] == version))}

    async def _load(self, group: str, version: str) -> _GroupVersion | None:
        key = (group, version)
        fut = self._inflight.get(key)
        if fut is not None:
            try:
                return await asyncio.shield(fut)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if fut.cancelled() and task is not None and not task.cancelling():
                    return await self._load(group, version)  # the task doing the fetch was cancelled, not us
                raise
        fut = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            try:
                body = await self._fetch(path)
            except NotFound:
                gv: _GroupVersion | None = None
                self._cache.pop(key, None)
            else:
                gv = _GroupVersion(parse_resource_list(group, version, body))
                self._cache[key] = gv
            fut.set_result(gv)
            return gv
        except asyncio.CancelledError:
            fut.cancel()
            raise
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved: waiters get it; nobody else must
            raise
        finally:
            del self._inflight[key]

    async def resolve(self, resource: ResourceLike) -> ApiResource:
        """The `ApiResource` for `resource`, refreshing discovery once on a miss."""
        if isinstance(resource, ApiResource):
            return resource
        ref = ResourceRef.parse(resource) if isinstance(resource, str) else resource
        found = self.cached(ref)
        if found is not None:
            return found
        gv = await self._load(ref.group, ref.version)
        found = gv.find(ref.name) if gv is not None else None
        if found is not None:
            return found
        if gv is None:
            raise UnknownResource(f"unknown resource {ref}: group/version is not served")
        if "." not in ref.group:
            import difflib  # only to word this error

            names = sorted({r.kind for r in gv.by_name.values()} | set(gv.by_name))
            close = difflib.get_close_matches(ref.name, names, n=3)
            hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
            raise UnknownKind(f"unknown kind {ref}: no such kind in the built-in group/version {ref.api_version}"
                              f"{hint}; no CRD can add kinds to a built-in group")
        typo = misspelt_kind(ref.name, {r.kind: (r.kind, r.plural, r.singular) for r in gv.by_name.values()})
        if typo is not None:
            raise UnknownKind(f"unknown kind {ref}: {ref.api_version} serves {typo!r} (did you mean "
                              f"'{ref.api_version}/{typo}'?); a kind this close to a served one is taken "
                              "for a typo rather than a CRD still to be installed")
        raise UnknownResource(f"unknown resource {ref}: no such kind or resource in this group/version")
