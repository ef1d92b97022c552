"""The one package that talks to Neo4j: the store, its statement hook, stored names, batched writes."""

from graphrag_orm.store.batches import EdgeWrites, NodeWrites
from graphrag_orm.store.connection import ConnectionSettings, open_driver, open_store, server_version
from graphrag_orm.store.names import StoredNames
from graphrag_orm.store.store import (
    DEFAULT_WRITE_ATTEMPTS,
    MAX_WRITE_ATTEMPTS,
    AccessMode,
    Queries,
    Result,
    StatementEvent,
    StatementHook,
    Store,
    StoreTransaction,
)

__all__ = [
    "DEFAULT_WRITE_ATTEMPTS",
    "MAX_WRITE_ATTEMPTS",
    "AccessMode",
    "ConnectionSettings",
    "EdgeWrites",
    "NodeWrites",
    "Queries",
    "Result",
    "StatementEvent",
    "StatementHook",
    "Store",
    "StoreTransaction",
    "StoredNames",
    "open_driver",
    "open_store",
    "server_version",
]
