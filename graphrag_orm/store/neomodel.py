"""Handing a driver to neomodel, for applications that query the typed classes.

The toolkit's own services never use neomodel's process-wide connection (``adb``):
they run every statement through a :class:`~graphrag_orm.store.Store`. Applications
query ``Document.nodes`` and the ontology classes through neomodel, so ``connect()``
points ``adb`` at the facade's driver. neomodel holds one connection per process: with
several ``GraphRag`` objects, the typed classes query the last one attached.

neomodel also picks the class a node is read as by its labels alone, and every layout's
classes carry the same module and name, so without help a node would be read as the
class of whichever layout the process built last (a ``Chunk`` of the default layout read
as the neo4j-graphrag layout's, its ``document`` looking for ``FROM_DOCUMENT``). Attaching
with the facade's :class:`~graphrag_orm.models.LexicalModel` maps its labels to its own
classes in neomodel's explicit registry, which is consulted first; detaching removes the
mappings it made.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import neo4j
from neomodel import adb, get_config

if TYPE_CHECKING:
    from graphrag_orm.models import LexicalModel

__all__ = ["attach_neomodel", "detach_neomodel"]


def _labels(cls: Any) -> frozenset[str]:
    return frozenset(cls.inherited_labels())


def _map(classes: Iterable[Any]) -> None:
    registry = adb._NODE_CLASS_REGISTRY
    for cls in classes:
        registry[_labels(cls)] = cls


def _unmap(classes: Iterable[Any]) -> None:
    registry = adb._NODE_CLASS_REGISTRY
    for cls in classes:
        if registry.get(_labels(cls)) is cls:
            del registry[_labels(cls)]


async def attach_neomodel(
    driver: neo4j.AsyncDriver, database: str | None = None, model: LexicalModel | None = None
) -> None:
    """Point neomodel's connection at ``driver`` (and ``database``); with ``model``, read the
    nodes of its labels as its classes (see the module's docstring)."""
    get_config().database_name = database or neo4j.DEFAULT_DATABASE
    await adb.set_connection(driver=driver)
    if model is not None:
        _map(model.node_classes)


def detach_neomodel(driver: neo4j.AsyncDriver | None, model: LexicalModel | None = None) -> None:
    """Forget ``driver`` if neomodel holds it (it is closed by its owner), and with it
    ``model``'s label mappings; a driver attached later keeps its connection and mappings."""
    if driver is not None and adb.driver is driver:
        if model is not None:
            _unmap(model.node_classes)
        adb.driver = None
