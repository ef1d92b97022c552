"""Reading the live schema: every constraint and index as the server reports it. Reads only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrag_orm.store.store import Store

__all__ = ["IndexState", "LiveDefinition", "read_index_states", "read_live_schema"]


@dataclass(frozen=True)
class LiveDefinition:
    """An index or constraint as the server reports it."""

    name: str
    signature: tuple[Any, ...]
    state: str
    detail: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """``KIND on Label(props) key=value ...``."""
        kind, labels, props = self.signature
        extra = "".join(f" {k}={v}" for k, v in sorted(self.detail.items()))
        return f"{kind} on {'|'.join(labels)}({', '.join(props)}){extra}"


async def read_live_schema(store: Store) -> dict[str, LiveDefinition]:
    """Every constraint and index (token lookups and constraint-owned indexes left out), by name."""
    live: dict[str, LiveDefinition] = {}
    constraints = await store.read(
        "SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties RETURN name, type, labelsOrTypes, properties",
        name="schema.constraints",
    )
    for row in constraints:
        name, kind, labels, props = row["name"], row["type"], row["labelsOrTypes"], row["properties"]
        live[name] = LiveDefinition(
            name, (str(kind).replace("NODE_PROPERTY_", ""), tuple(labels or ()), tuple(props or ())), "ONLINE"
        )
    indexes = await store.read(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state, options, owningConstraint "
        "WHERE type <> 'LOOKUP' AND owningConstraint IS NULL "
        "RETURN name, type, labelsOrTypes, properties, state, options",
        name="schema.indexes",
    )
    for row in indexes:
        name, kind, labels, props = row["name"], row["type"], row["labelsOrTypes"], row["properties"]
        state, options = row["state"], row["options"]
        config = (options or {}).get("indexConfig", {}) or {}
        detail: dict[str, Any] = {}
        label_tuple = tuple(labels or ())
        if kind == "VECTOR":
            detail = {
                "dimensions": int(config.get("vector.dimensions", 0)),
                "similarity": str(config.get("vector.similarity_function", "")).lower(),
            }
        elif kind == "FULLTEXT":
            detail = {"analyzer": str(config.get("fulltext.analyzer", ""))}
            label_tuple = tuple(sorted(label_tuple))
        live[name] = LiveDefinition(name, (kind, label_tuple, tuple(props or ())), str(state), detail)
    return live


@dataclass(frozen=True)
class IndexState:
    """An index's population state (``ONLINE``, ``POPULATING``, ``FAILED``) and percentage."""

    state: str
    percent: float


async def read_index_states(store: Store, names: Sequence[str]) -> dict[str, IndexState]:
    """The state of each index in ``names`` that exists, by name (absent names are left out)."""
    result = await store.read(
        "SHOW INDEXES YIELD name, state, populationPercent WHERE name IN $names RETURN name, state, populationPercent",
        {"names": list(names)},
        name="schema.index_states",
    )
    return {row["name"]: IndexState(str(row["state"]), float(row["populationPercent"] or 0.0)) for row in result}
