"""Handing a driver to neomodel, for applications that query the typed classes.

The toolkit's own services never use neomodel's process-wide connection (``adb``):
they run every statement through a :class:`~graphrag_orm.store.Store`. Applications
query ``Document.nodes`` and the ontology classes through neomodel, so ``connect()``
points ``adb`` at the facade's driver. neomodel holds one connection per process: with
several ``GraphRag`` objects, the typed classes query the last one attached.
"""

from __future__ import annotations

import neo4j
from neomodel import adb, get_config

__all__ = ["attach_neomodel", "detach_neomodel"]


async def attach_neomodel(driver: neo4j.AsyncDriver, database: str | None = None) -> None:
    """Point neomodel's connection at ``driver`` (and ``database``)."""
    get_config().database_name = database or neo4j.DEFAULT_DATABASE
    await adb.set_connection(driver=driver)


def detach_neomodel(driver: neo4j.AsyncDriver | None) -> None:
    """Forget ``driver`` if neomodel holds it (it is closed by its owner)."""
    if driver is not None and adb.driver is driver:
        adb.driver = None
