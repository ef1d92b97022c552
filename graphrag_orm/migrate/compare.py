"""Declared schema against the live database: ``check``, the conflicts ``apply`` refuses, the vector index.

Every comparison of a declared definition with what the server reports lives here:
:func:`compare` (missing, different, unexpected, not ONLINE), :func:`refuse_conflicts`
(what ``apply`` stops on before running a step) and :func:`check_vector_index` (what
``GraphRag.connect()`` refuses). Everything here reads; nothing changes the database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import MigrationError, SchemaMismatch
from graphrag_orm.layout import Layout
from graphrag_orm.migrate.journal import JOURNAL_CONSTRAINT
from graphrag_orm.migrate.lock import LOCK_CONSTRAINT
from graphrag_orm.schema import DropStep, FullTextIndex, MigrationStep, Schema, SchemaDefinition, VectorIndex
from graphrag_orm.store import Store
from graphrag_orm.store.introspection import LiveDefinition, read_live_schema
from graphrag_orm.tenancy import TENANT_PROPERTY
from graphrag_orm.values import Value

__all__ = [
    "SchemaCheck",
    "SchemaDifference",
    "check_schema",
    "check_vector_index",
    "compare",
    "describe",
    "equivalents",
    "matches",
    "refuse_conflicts",
    "refuse_other_embedding_set",
]

#: The migration machinery's own constraints: made by ``apply`` without a revision, never "unexpected".
_OWN_CONSTRAINTS = frozenset({JOURNAL_CONSTRAINT, LOCK_CONSTRAINT})


class SchemaDifference(Value):
    name: str
    expected: str | None = None
    actual: str | None = None


class SchemaCheck(Value):
    """Expected schema against the live database: missing, different, unexpected, not online."""

    missing: tuple[SchemaDifference, ...] = ()
    different: tuple[SchemaDifference, ...] = ()
    unexpected: tuple[SchemaDifference, ...] = ()
    not_online: tuple[SchemaDifference, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.missing or self.different or self.unexpected or self.not_online)


def _detail(definition: SchemaDefinition) -> dict[str, Any]:
    # The same keys introspection reads from a live index's options.
    if isinstance(definition, VectorIndex):
        return {"dimensions": definition.dimensions, "similarity": definition.similarity.value}
    if isinstance(definition, FullTextIndex):
        return {"analyzer": definition.analyzer.value}
    return {}


def describe(definition: SchemaDefinition) -> str:
    """``KIND on Label(props) key=value ...``, the same text :meth:`LiveDefinition.describe` gives."""
    return LiveDefinition(definition.name, definition.signature(), "ONLINE", _detail(definition)).describe()


def matches(expected: SchemaDefinition, actual: LiveDefinition) -> bool:
    """Same kind, labels, properties and options (names are not compared)."""
    return expected.signature() == actual.signature and _detail(expected) == actual.detail


def equivalents(expected: SchemaDefinition, live: Mapping[str, LiveDefinition]) -> list[LiveDefinition]:
    """Live definitions of the same kind on the same labels and properties, under another name."""
    return [
        actual for actual in live.values() if actual.name != expected.name and actual.signature == expected.signature()
    ]


def compare(
    expected: Sequence[SchemaDefinition], live: Mapping[str, LiveDefinition], *, prefix: str | None = None
) -> SchemaCheck:
    """``expected`` against ``live`` by name.

    ``unexpected`` lists live definitions whose names start with ``prefix`` (the
    toolkit's own namespace) that are not expected; others belong to the application.
    """
    missing: list[SchemaDifference] = []
    different: list[SchemaDifference] = []
    not_online: list[SchemaDifference] = []
    wanted = {d.name: d for d in expected}
    for name, definition in wanted.items():
        actual = live.get(name)
        if actual is None:
            missing.append(SchemaDifference(name=name, expected=describe(definition)))
        elif not matches(definition, actual):
            different.append(SchemaDifference(name=name, expected=describe(definition), actual=actual.describe()))
        elif actual.state != "ONLINE":
            not_online.append(SchemaDifference(name=name, expected="ONLINE", actual=actual.state))
    unexpected = [
        SchemaDifference(name=name, actual=actual.describe())
        for name, actual in sorted(live.items())
        if prefix and name.startswith(prefix + "_") and name not in wanted and name not in _OWN_CONSTRAINTS
    ]
    return SchemaCheck(
        missing=tuple(missing),
        different=tuple(different),
        unexpected=tuple(unexpected),
        not_online=tuple(not_online),
    )


async def check_schema(store: Store, expected: Sequence[SchemaDefinition], *, prefix: str | None = None) -> SchemaCheck:
    """:func:`compare` ``expected`` with the live schema; changes nothing."""
    return compare(expected, await read_live_schema(store), prefix=prefix)


def refuse_conflicts(steps: Sequence[MigrationStep], live: Mapping[str, LiveDefinition]) -> None:
    """Check ``steps`` in order against ``live`` as the earlier steps would leave it.

    Raises ``MigrationError("schema-conflict")`` when a created name exists with another
    definition and ``MigrationError("equivalent-schema")`` when an equivalent exists under
    another name (stop for review). ``live`` itself is not changed.
    """
    state = dict(live)
    for step in steps:
        wanted = step.definition
        if isinstance(step, DropStep):
            state.pop(wanted.name, None)
            continue
        same_name = state.get(wanted.name)
        if same_name is not None:
            if not matches(wanted, same_name):
                raise MigrationError(
                    ErrorCode.SCHEMA_CONFLICT,
                    f"{wanted.name} exists as {same_name.describe()} but the revision declares "
                    f"{describe(wanted)}; drop or rename it in a reviewed revision first",
                )
            continue
        for other in equivalents(wanted, state):
            raise MigrationError(
                ErrorCode.EQUIVALENT_SCHEMA,
                f"{wanted.name} ({describe(wanted)}) has an equivalent under another name, "
                f"{other.name} ({other.describe()}); stopping for review: rename one of them, or adopt "
                "the existing name in your layout",
            )
        state[wanted.name] = LiveDefinition(wanted.name, wanted.signature(), "ONLINE", _detail(wanted))


def _indexes_embedding(expected: VectorIndex, actual: LiveDefinition) -> bool:
    """A vector index on the same label and embedding property, whatever filter properties it declares."""
    kind, labels, props = actual.signature
    return (kind, labels) == expected.signature()[:2] and props[:1] == (expected.property,)


_CHOOSING_THE_SET = (
    "use the set the graph was built with (the command line and graphrag_from_env read "
    "GRAPHRAG_EMBEDDING_MODEL and GRAPHRAG_EMBEDDING_DIMENSIONS, `hashing` for the stand-in, the local model "
    "when unset; code passes GraphRag(embedding_set=...))"
)


async def check_vector_index(store: Store, layout: Layout, embedding_set: EmbeddingSet) -> None:
    """Refuse a chunk vector index that ingestion could not write or retrieval could not search.

    ``SchemaMismatch("schema-missing")``: no vector index on the chunk label and embedding
    property. ``SchemaMismatch("embedding-dimensions")``: the index there holds vectors of
    other dimensions than ``embedding_set``. ``SchemaMismatch("equivalent-schema")``: it has
    the right dimensions but not the name retrieval searches (the layout's name for the
    set's index), naming both. The similarity and the filter properties the index declares
    are not compared (``migrations check`` compares them), except that a tenanted layout's index
    must declare ``tenant``, and its full-text index cover ``tenant`` (``schema-missing``
    otherwise). Reads only.
    """
    expected = Schema.vector_index(layout, embedding_set)
    live = await read_live_schema(store)
    named = live.get(expected.name)
    candidates = (
        [named]
        if named is not None and _indexes_embedding(expected, named)
        else [c for c in live.values() if c.name != expected.name and _indexes_embedding(expected, c)]
    )
    if not candidates:
        raise SchemaMismatch(
            ErrorCode.SCHEMA_MISSING,
            f"no vector index on :{expected.label}({expected.property}); apply the migrations first "
            "(graphrag-orm migrations apply)",
        )
    actual = next((c for c in candidates if c.detail.get("dimensions") == expected.dimensions), candidates[0])
    if actual.detail.get("dimensions") != expected.dimensions:
        raise SchemaMismatch(
            ErrorCode.EMBEDDING_DIMENSIONS,
            f"the vector index {actual.name} holds {actual.detail.get('dimensions')}-dimensional vectors but the "
            f"embedding set {embedding_set.id} has {expected.dimensions}; {_CHOOSING_THE_SET}, or re-embed "
            "(graphrag-orm reembed, or a reviewed migration: graphrag-orm migrations revision)",
        )
    if actual.name != expected.name:
        # Same dimensions under another name is usually another model's vectors: retrieval would search
        # an index that does not exist (retrieval-failed), or, renamed, compare vectors of two models.
        raise SchemaMismatch(
            ErrorCode.EQUIVALENT_SCHEMA,
            f"the vector index on :{expected.label}({expected.property}) is {actual.name}, but the embedding set "
            f"{embedding_set.id} expects {expected.name}; {_CHOOSING_THE_SET}, or, if "
            f"{actual.name} holds this set's vectors, name it in the layout (Layout.replace(vector_index=...))",
        )
    if layout.tenanted and TENANT_PROPERTY not in actual.signature[2][1:]:
        # Retrieval filters by tenant inside the index (SEARCH ... WHERE c.tenant = $tenant).
        raise SchemaMismatch(
            ErrorCode.SCHEMA_MISSING,
            f"the vector index {actual.name} does not declare {TENANT_PROPERTY} as a filter property, which a "
            "tenanted graph searches by; apply the tenancy revision (Chain.load(tenanted=True), docs/tenancy.md)",
        )
    text = live.get(layout.fulltext_index_name()) if layout.tenanted else None
    if layout.tenanted and (text is None or TENANT_PROPERTY not in text.signature[2]):
        # The full-text route requires the tenant's phrase on the index's tenant field: without it, no hit.
        raise SchemaMismatch(
            ErrorCode.SCHEMA_MISSING,
            f"the full-text index {layout.fulltext_index_name()} does not cover {TENANT_PROPERTY}, which a tenanted "
            "graph searches by; apply the tenancy revisions (Chain.load(tenanted=True), docs/tenancy.md)",
        )


async def check_names_index(store: Store, layout: Layout, index_name: str) -> None:
    """Refuse a tenanted layout's names index (the ontology's ``index_name``) that does not cover
    ``tenant`` (``schema-missing``): the graph route and the knowledge reads ask it for the tenant's
    phrase, so without it they would find no thing. Untenanted, nothing is checked. Reads only."""
    if not layout.tenanted:
        return
    names = (await read_live_schema(store)).get(index_name)
    if names is None or TENANT_PROPERTY not in names.signature[2]:
        raise SchemaMismatch(
            ErrorCode.SCHEMA_MISSING,
            f"the names index {index_name} does not cover {TENANT_PROPERTY}, which a tenanted graph's knowledge "
            "graph is searched by; apply the ontology's revision for the tenanted layout (docs/tenancy.md)",
        )


async def refuse_other_embedding_set(store: Store, layout: Layout, embedding_set: EmbeddingSet) -> None:
    """Refuse to build ``embedding_set``'s vector index over chunks that another set embedded.

    Replacing the index would leave their vectors unsearched, so a chunk holding a vector
    recorded under another set (or none) is ``SchemaMismatch("embedding-dimensions")``, one
    line naming both sets and how to choose the set. Reads one row: the first such chunk's
    set id, never a vector.
    """
    chunk = layout.chunk_label
    found = await store.read(
        f"MATCH (c:`{chunk}`) WHERE c.`{layout.chunk_embedding_property}` IS NOT NULL "
        "AND coalesce(c.embeddingSetId, '') <> $set RETURN coalesce(c.embeddingSetId, '(none)') AS other LIMIT 1",
        {"set": embedding_set.id},
        name="migrate.other_embedding_set",
    )
    if found.records:
        other = found.records[0]["other"]
        raise SchemaMismatch(
            ErrorCode.EMBEDDING_DIMENSIONS,
            f"the graph holds chunks embedded with {other}, and applying would replace their vector index with "
            f"the one for {embedding_set.id} ({embedding_set.dimensions} dimensions); {_CHOOSING_THE_SET}, "
            "or re-embed (graphrag-orm reembed, or a reviewed migration: graphrag-orm migrations revision)",
        )
