"""The dry run: counts, grounding and blockers of an adoption, read without writing anything.

Every statement is a read (:meth:`Store.read`, :meth:`Store.read_work`, the live schema);
source files are loaded to place their documents' chunks. Blockers:

- the graph's own shape: a chunk without a document or in several, a document without
  a path or two with one path, a chunk without a usable index (missing, not an integer,
  or repeated in its document) or without text, an embedding of other dimensions than
  the embedding set's;
- ownership: documents or chunks a run of ours already owns (``owned-by-run``), and
  elements already holding a property apply would write (``property-taken``), since
  undo could not tell theirs from ours;
- the schema: a step of :meth:`prepare_steps` whose name exists with another definition
  (``schema-conflict``) or whose equivalent exists under another name
  (``equivalent-schema``: name it in the layout), an index the layout names that is
  absent (``schema-missing``) or on other labels, properties or dimensions
  (``schema-mismatch``), and steps not applied yet (``schema-missing``).

In a tenanted graph every statement sees only the nodes without a tenant and the store's
tenant's own (:class:`~graphrag_orm.adoption.statements.AdoptionStatements`), so nothing
of another tenant is counted or listed; an index the layout names is rebuilt with
``tenant`` by :meth:`prepare_steps`, so until that revision is applied it is pending
(``schema-missing``), and one that is neither the other tool's definition nor the
tenanted one is ``schema-mismatch``: dropping it would lose what the layout does not say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphrag_orm.adoption.placing import ground
from graphrag_orm.adoption.statements import AdoptionStatements
from graphrag_orm.adoption.values import AdoptionBlocker, AdoptionOptions, AdoptionPreview
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.evidence import Grounding
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.migrate.compare import compare, equivalents
from graphrag_orm.schema import CreateStep, DropStep, MigrationStep, Schema, SchemaDefinition, VectorIndex
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.store.introspection import LiveDefinition, read_live_schema
from graphrag_orm.values import Limit

__all__ = ["preview"]

_ADVICE: Mapping[ErrorCode, str] = {
    ErrorCode.CHUNK_WITHOUT_DOCUMENT: "chunks have no document: link each to its document or remove it",
    ErrorCode.CHUNK_IN_SEVERAL_DOCUMENTS: "chunks belong to several documents: keep one link each",
    ErrorCode.DOCUMENT_WITHOUT_PATH: "documents have no path: give each a path, which names it",
    ErrorCode.DUPLICATE_PATH: "documents share a path with another: one path names one document",
    ErrorCode.CHUNK_WITHOUT_INDEX: "chunks have no index, a non-integer one, or share one in their document",
    ErrorCode.CHUNK_WITHOUT_TEXT: "chunks have no text",
    ErrorCode.EMBEDDING_DIMENSIONS: "chunks hold embeddings of other dimensions than the embedding set",
    ErrorCode.OWNED_BY_RUN: "documents or chunks are already owned by a graphrag-orm run",
    ErrorCode.PROPERTY_TAKEN: "elements already hold a property adoption writes, so undo could not restore them",
}


async def preview(
    store: Store,
    statements: AdoptionStatements,
    layout: Layout,
    embedding_set: EmbeddingSet,
    options: AdoptionOptions,
    steps: Sequence[MigrationStep],
    loaders: LoaderRegistry,
) -> AdoptionPreview:
    """What :meth:`AdoptionPlan.preview <graphrag_orm.adoption.AdoptionPlan.preview>` returns; reads only."""
    counts = (await store.read(statements.counts, name="adoption.preview.counts")).single() or {}
    found = await store.read_work(lambda tx: _graph_blockers(tx, statements, embedding_set, options))
    schema_blockers, pending, adopted = _schema(
        await read_live_schema(store), layout, embedding_set, steps, options.max_listed
    )
    placed, not_placed, unmatched, source_chunks = await _grounding(store, statements, options, loaders)
    listed = options.max_listed
    blockers = [b.model_copy(update={"examples": b.examples[:listed]}) for b in (*found, *schema_blockers)]
    limits = [Limit(name=LimitName.MAX_LISTED, value=options.max_listed)] if _cut(blockers, options) else []
    chunks = int(counts.get("chunks") or 0)
    return AdoptionPreview(
        documents=int(counts.get("documents") or 0),
        chunks=chunks,
        document_links=int(counts.get("documentLinks") or 0),
        next_links=int(counts.get("nextLinks") or 0),
        documents_placed=placed,
        documents_not_placed=not_placed,
        sources_unmatched=unmatched,
        chunks_source_grounded=source_chunks,
        chunks_chunk_grounded=max(chunks - source_chunks, 0),
        chunks_without_embedding=int(counts.get("unembedded") or 0),
        steps_pending=pending,
        indexes_adopted=adopted,
        blockers=tuple(blockers),
        limits_reached=tuple(limits),
    )


def _cut(blockers: Sequence[AdoptionBlocker], options: AdoptionOptions) -> bool:
    """Whether the bound left examples out: a blocker with more elements than examples, at the bound."""
    return any(b.count > len(b.examples) and len(b.examples) == options.max_listed for b in blockers)


async def _graph_blockers(
    tx: StoreTransaction, statements: AdoptionStatements, embedding_set: EmbeddingSet, options: AdoptionOptions
) -> list[AdoptionBlocker]:
    parameters: dict[str, Any] = {
        "listed": options.max_listed,
        "dimensions": embedding_set.dimensions,
        "documentKeys": list(statements.document_keys),
        "chunkKeys": list(statements.chunk_keys),
    }
    found: list[AdoptionBlocker] = []
    for code, cypher in statements.blockers.items():
        row = (await tx.run(cypher, parameters, name=f"adoption.preview.{code.value}")).single() or {}
        count = int(row.get("count") or 0)
        if count:
            examples = tuple(str(example) for example in row.get("examples") or ())
            found.append(AdoptionBlocker(code=code, count=count, examples=examples, message=f"{count} {_ADVICE[code]}"))
    return found


def _schema(
    live: Mapping[str, LiveDefinition],
    layout: Layout,
    embedding_set: EmbeddingSet,
    steps: Sequence[MigrationStep],
    listed: int,
) -> tuple[list[AdoptionBlocker], tuple[str, ...], tuple[str, ...]]:
    """Blockers of the schema, the steps not applied yet, and the adopted indexes found as named."""
    blockers: list[AdoptionBlocker] = []
    definitions = [step.definition for step in steps if isinstance(step, CreateStep)]
    # A tenanted layout rebuilds the other tool's named indexes: drop, then create under that name.
    replaced = {step.definition.name: step.definition for step in steps if isinstance(step, DropStep)}
    check = compare(definitions, live)
    for difference in check.different:
        if difference.name not in replaced:
            blockers.append(_blocker(ErrorCode.SCHEMA_CONFLICT, difference.name, "exists with another definition"))
    pending = tuple(difference.name for difference in check.missing) + tuple(
        difference.name for difference in check.different if difference.name in replaced
    )
    for definition in definitions:
        if definition.name in pending:
            for other in equivalents(definition, live):
                blockers.append(
                    _blocker(
                        ErrorCode.EQUIVALENT_SCHEMA,
                        other.name,
                        f"is what {definition.name} would create: name it in the layout",
                    )
                )
    if pending:
        blockers.append(
            AdoptionBlocker(
                code=ErrorCode.SCHEMA_MISSING,
                count=len(pending),
                examples=pending[:listed],
                message=f"{len(pending)} schema steps are not applied: apply prepare_steps() as a migration first",
            )
        )
    adopted: list[str] = []
    for named in _named_indexes(layout, embedding_set):
        actual = live.get(named.name)
        theirs = replaced.get(named.name)
        if actual is not None and theirs is not None and named.name in pending and _same(actual, theirs):
            continue  # the other tool's, as the layout says: the pending revision rebuilds it with the tenant
        if actual is None:
            blockers.append(_blocker(ErrorCode.SCHEMA_MISSING, named.name, "is named by the layout but absent"))
        elif not _same(actual, named):
            blockers.append(_blocker(ErrorCode.SCHEMA_MISMATCH, named.name, f"is {actual.describe()}"))
        else:
            adopted.append(named.name)
    return blockers, pending, tuple(adopted)


def _same(actual: LiveDefinition, definition: SchemaDefinition) -> bool:
    """Whether the live index is ``definition``: its signature, and a vector index's dimensions."""
    return actual.signature == definition.signature() and (
        not isinstance(definition, VectorIndex) or actual.detail.get("dimensions") == definition.dimensions
    )


def _named_indexes(layout: Layout, embedding_set: EmbeddingSet) -> list[SchemaDefinition]:
    """The indexes the layout names: the other tool's, adopted as they are."""
    named = {layout.vector_index, layout.fulltext_index} - {None}
    return [d for d in Schema.definitions(layout, embedding_set) if d.name in named]


def _blocker(code: ErrorCode, name: str, what: str) -> AdoptionBlocker:
    return AdoptionBlocker(code=code, count=1, examples=(name,), message=f"{name} {what}")


async def _grounding(
    store: Store, statements: AdoptionStatements, options: AdoptionOptions, loaders: LoaderRegistry
) -> tuple[int, int, int, int]:
    """Documents a source file places and does not place, source paths without a document, and
    chunks that would be source-grounded."""
    paths = sorted(options.source_files)
    placed = not_placed = chunks = 0
    seen: set[str] = set()
    for first in range(0, len(paths), options.batch_size):
        page = paths[first : first + options.batch_size]
        rows = await store.read(statements.chunks_of_paths, {"paths": page}, name="adoption.preview.sources")
        for row in rows:
            path = str(row["path"])
            seen.add(path)
            texts = _texts(row["chunks"])
            if texts is None:
                not_placed += 1
                continue
            grounded = await ground(path, texts, options.source_files[path], loaders)
            if grounded.grounding is Grounding.SOURCE:
                placed += 1
                chunks += len(texts)
            else:
                not_placed += 1
    return placed, not_placed, len(set(paths) - seen), chunks


def _texts(chunks: Sequence[Mapping[str, Any]]) -> list[str] | None:
    """The chunks' texts in index order, or None when an index or a text is unusable (a blocker says so)."""
    if any(not isinstance(c.get("index"), int) or not isinstance(c.get("text"), str) for c in chunks):
        return None
    return [str(c["text"]) for c in sorted(chunks, key=lambda c: int(c["index"]))]
