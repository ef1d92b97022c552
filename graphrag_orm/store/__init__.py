"""The one package that talks to Neo4j: the store, its statement hook, stored names, batched writes,
and the sandbox for Cypher a caller or a model supplies."""

from graphrag_orm.store.batches import EdgeWrites, NodeWrites
from graphrag_orm.store.connection import ConnectionSettings, open_driver, open_store, server_version
from graphrag_orm.store.gate import CypherGate
from graphrag_orm.store.names import StoredNames
from graphrag_orm.store.sandbox import CypherSandbox, SandboxLimits, SandboxResult
from graphrag_orm.store.store import (
    DEFAULT_WRITE_ATTEMPTS,
    MAX_WRITE_ATTEMPTS,
    AccessMode,
    Plan,
    Queries,
    Result,
    StatementEvent,
    StatementHook,
    Store,
    StoreTransaction,
    UnknownName,
)

__all__ = [
    "DEFAULT_WRITE_ATTEMPTS",
    "MAX_WRITE_ATTEMPTS",
    "AccessMode",
    "ConnectionSettings",
    "CypherGate",
    "CypherSandbox",
    "EdgeWrites",
    "NodeWrites",
    "Plan",
    "Queries",
    "Result",
    "SandboxLimits",
    "SandboxResult",
    "StatementEvent",
    "StatementHook",
    "Store",
    "StoreTransaction",
    "StoredNames",
    "UnknownName",
    "open_driver",
    "open_store",
    "server_version",
]
