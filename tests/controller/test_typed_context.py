"""Typed resources in controllers: the builder, ``ctx.reader`` and ``Manager.informer`` take the class for its
name, and a reconcile reads its primary and owned children as typed resources (`ctx.get(Type)`,
`ctx.owned(Type)`): validated, read-only models, over real HTTP on the emulator or a real cluster."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from kubeloop import Context, Controller, Manager, Request, Result
from kubeloop.client import Client
from kubeloop.controller import resource_name
from kubeloop.resources import CustomResource, Model, crd
from kubeloop.testing import eventually, install_crd

CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"


class ShelfSpec(Model):
    titles: list[str] = []


class BookSpec(Model):
    title: str
    pages: int = 100


def kinds(group: str) -> tuple[Any, Any]:
    """A Shelf that owns one Book per title, in ``group`` (random per test: a real cluster is shared)."""

    class Shelf(CustomResource, group=group, version="v1"):
        spec: ShelfSpec
        status: dict[str, Any] | None = None

    class Book(CustomResource, group=group, version="v1"):
        spec: BookSpec

    return Shelf, Book


@pytest.fixture
async def shelf_kinds(client: Client) -> AsyncIterator[tuple[Any, Any]]:
    group = f"kl{secrets.token_hex(3)}.example.com"
    shelf, book = kinds(group)
    definitions = [crd(shelf), crd(book)]
    for definition in definitions:
        await install_crd(client, definition)
    try:
        yield shelf, book
    finally:
        for definition in definitions:
            await client.delete(CRD, definition["metadata"]["name"])


async def test_reconcile_reads_primary_and_children_typed(client: Client, namespace: str,
                                                          shelf_kinds: tuple[Any, Any]) -> None:
    Shelf, Book = shelf_kinds
    read: dict[str, Any] = {}

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        shelf = ctx.get(Shelf)
        if shelf is None:
            return None
        for title in shelf.spec.titles:
            await ctx.apply(Book(metadata={"name": title}, spec=BookSpec(title=title.upper())).to_object(),
                            owner=shelf)  # the typed primary as the owner
        books = ctx.owned(Book)
        read.update(shelf=shelf, books=books, untyped=ctx.owned(Book.resource()),
                    in_cache=sorted(b["metadata"]["name"] for b in ctx.reader(Book).list(req.namespace)))
        await ctx.apply_status({"books": sorted(b.spec.title for b in books)})
        return None

    async def metadata_only(req: Request, ctx: Context) -> Result | None:
        try:
            ctx.owned(Book)
        except TypeError as exc:
            read["error"] = str(exc)
        return None

    manager = Manager(client)
    manager.add(Controller("shelves", for_=Shelf, reconcile=reconcile, namespace=namespace)
                .owns(Book, metadata_only=False))
    manager.add(Controller("metadata-only", for_=Shelf, reconcile=metadata_only, namespace=namespace)
                .owns(Book))
    async with manager:
        await client.create(Shelf(metadata={"name": "s"}, spec=ShelfSpec(titles=["a", "b"])).to_object(),
                            namespace=namespace)

        async def shelved() -> bool:
            status = (await client.get(Shelf.resource(), "s", namespace=namespace)).get("status") or {}
            return status.get("books") == ["A", "B"]

        await eventually(shelved)
        await eventually(lambda: "error" in read)
    shelf, books = read["shelf"], read["books"]
    assert type(shelf) is Shelf and shelf.spec.titles == ["a", "b"]
    assert {type(b) for b in books} == {Book} and sorted(b.spec.pages for b in books) == [100, 100]
    assert sorted(b["spec"]["title"] for b in read["untyped"]) == ["A", "B"]  # the name still gives views
    assert set(read["in_cache"]) >= {"a", "b"}
    assert "owns(Book, metadata_only=False)" in read["error"]  # children without a spec: refused
    with pytest.raises(ValidationError):
        books[0].spec.title = "changed"  # read-only, as the cache's views are


def test_the_builder_and_the_manager_take_a_typed_resource_class_for_its_name(client: Client) -> None:
    Shelf, Book = kinds("example.com")

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        return None

    controller = (Controller("shelves", for_=Shelf, reconcile=reconcile, writes=[Book]).owns(Book)
                  .watches(Book, lambda book: []))
    assert [s.resource for s in controller.sources] == [Shelf.resource(), Book.resource(), Book.resource()]
    assert controller.spec.writes == (Book.resource(),)
    assert Manager(client).informer(Shelf).resource == Shelf.resource() == "example.com/v1/Shelf"


def test_a_bad_resource_argument_is_a_clear_error() -> None:
    assert resource_name("v1/ConfigMap") == "v1/ConfigMap"
    with pytest.raises(TypeError, match=r"resource name .* or a kubeloop.resources.CustomResource class, got 3"):
        resource_name(3)
    with pytest.raises(TypeError, match="got <class 'dict'>"):
        resource_name(dict)

    async def reconcile(req: Request, ctx: Context) -> Result | None:
        return None

    with pytest.raises(TypeError, match="got <class 'dict'>"):  # at build time, not when the controller runs
        Controller("c", for_=dict, reconcile=reconcile)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got <class 'dict'>"):
        Controller("c", for_="v1/ConfigMap", reconcile=reconcile).owns(dict)  # type: ignore[arg-type]
