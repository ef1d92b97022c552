"""One transaction per document: renew the lease, replace the document's content, commit.

Inside the transaction, in order: the lease is renewed by a conditional update that
must change exactly one row (else ``lease-lost`` and nothing is written); the
previous version's knowledge is retracted and its structural edges, then chunks and
sections, are deleted by the document's key (never ``DETACH DELETE``: an edge the
toolkit does not own makes the delete fail, and the document with it, rather than
vanish silently); then the document, its sections, its chunks with their vectors,
and their edges are written with a few batched UNWIND statements
(:class:`~graphrag_orm.ingestion.statements.DocumentStatements`). Chunks go
:func:`chunk_rows_per_statement` rows per statement (and other rows
:data:`ROWS_PER_STATEMENT`), so the server holds one slice of the parameters at a
time besides the transaction's state (measured in docs/ingest.md). A new document
whose lists each fit one slice is the renewal and all its writes in one statement
(``write_new``): one round trip before the commit. A process killed
at any point leaves the document as it was before, or complete. A transient error
(a deadlock with another worker) runs the whole transaction again, at most
``attempts`` times (:meth:`Store.write <graphrag_orm.store.Store.write>`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from graphrag_orm.chunking import ChunkPlan, PlanIds, plan_ids
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import DocumentFailure
from graphrag_orm.extraction.grounding import DocumentKnowledge
from graphrag_orm.extraction.writer import KnowledgeWriter, retract_knowledge
from graphrag_orm.ingestion.leases import Leases
from graphrag_orm.ingestion.statements import DocumentStatements, Statement
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.models import LexicalModel
from graphrag_orm.sources import Source
from graphrag_orm.store import DEFAULT_WRITE_ATTEMPTS, Store, StoreTransaction

__all__ = [
    "ROWS_PER_STATEMENT",
    "VECTOR_COORDINATES_PER_STATEMENT",
    "DocumentRows",
    "DocumentWriter",
    "PreparedDocument",
    "chunk_rows_per_statement",
]

#: Rows of sections and edges per statement of a document's transaction.
ROWS_PER_STATEMENT = 1_000
#: Vector coordinates per chunk statement: a slice of the parameters, not the whole document.
VECTOR_COORDINATES_PER_STATEMENT = 1_000_000


def chunk_rows_per_statement(dimensions: int) -> int:
    """Chunks per statement for vectors of ``dimensions``: 50 to :data:`ROWS_PER_STATEMENT`."""
    return max(50, min(ROWS_PER_STATEMENT, VECTOR_COORDINATES_PER_STATEMENT // max(dimensions, 1)))


def _slices(rows: list[dict[str, Any]], size: int) -> list[list[dict[str, Any]]]:
    return [rows[start : start + size] for start in range(0, len(rows), size)]


@dataclass(frozen=True)
class DocumentRows:
    """One document's rows for its statements, by the parameter names of ``write_new``."""

    document: list[dict[str, Any]]
    sections: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    chunk_sections: list[dict[str, Any]]
    next_chunks: list[dict[str, Any]]
    subsections: list[dict[str, Any]]
    chunks_per_statement: int

    @property
    def fits_one_statement(self) -> bool:
        """Every list within its slice: the one statement holds no more than a sliced one would."""
        others = (self.sections, self.chunk_sections, self.next_chunks, self.subsections)
        return len(self.chunks) <= self.chunks_per_statement and all(len(r) <= ROWS_PER_STATEMENT for r in others)

    def parameters(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "document": self.document,
            "sections": self.sections,
            "chunks": self.chunks,
            "chunk_sections": self.chunk_sections,
            "next_chunks": self.next_chunks,
            "subsections": self.subsections,
        }


@dataclass(frozen=True)
class PreparedDocument:
    """Everything one document's transaction writes, computed before it begins."""

    source: Source
    loaded: LoadedDocument
    plan: ChunkPlan
    vectors: Sequence[list[float]]
    embedding_set_id: str
    settings_fingerprint: str
    knowledge: DocumentKnowledge | None = None
    #: False when the document was absent under the lease: there is nothing to replace.
    existed: bool = True
    #: The plan's chunk and section ids, computed once by whoever planned it (None: computed here).
    ids: PlanIds | None = None

    @property
    def document_id(self) -> str:
        return self.source.document_id

    @property
    def plan_ids(self) -> PlanIds:
        """The ids the plan's chunks and sections are stored under."""
        return self.ids or plan_ids(self.plan, self.document_id, self.loaded.content_hash)


class DocumentWriter:
    """Writes prepared documents of one layout, one transaction each."""

    def __init__(
        self,
        store: Store,
        model: LexicalModel,
        leases: Leases,
        knowledge: KnowledgeWriter | None = None,
        *,
        attempts: int = DEFAULT_WRITE_ATTEMPTS,
    ) -> None:
        self.store = store
        self.model = model
        self.names = model.names
        self.leases = leases
        self.knowledge = knowledge
        self.attempts = attempts
        self.templates = DocumentStatements.render(self.names)

    def rows(self, prepared: PreparedDocument, run_id: str) -> DocumentRows:
        """The document's rows, each list whole (the statements slice them)."""
        plan, doc_id, ids = prepared.plan, prepared.document_id, prepared.plan_ids
        section_ids = {s.order: ids.sections[i] for i, s in enumerate(plan.sections)}
        chunk_ids = list(ids.chunks)
        stamp = {"run_id": run_id}
        # Sections and chunks are created with the edge to their document in one statement.
        section_edge = self.names.section_document.props(stamp)
        chunk_edge = self.names.chunk_document.props(stamp)
        in_section, following, parents = self._edge_rows(plan, section_ids, chunk_ids, stamp)
        dimensions = len(prepared.vectors[0]) if prepared.vectors else 1
        return DocumentRows(
            document=[self._document_row(prepared, run_id)],
            sections=[
                {"props": row, "target": doc_id, "edge": section_edge}
                for row in self._section_rows(prepared, section_ids, run_id)
            ],
            chunks=[
                {"props": row, "target": doc_id, "edge": chunk_edge}
                for row in self._chunk_rows(prepared, chunk_ids, run_id)
            ],
            chunk_sections=in_section,
            next_chunks=following,
            subsections=parents,
            chunks_per_statement=chunk_rows_per_statement(dimensions),
        )

    def statements(self, prepared: PreparedDocument, run_id: str) -> list[tuple[Statement, Mapping[str, Any]]]:
        """The document's writes after the lease renewal and the retraction, one list slice per statement.

        The delete of a previous version comes first, and only when one existed.
        """
        return self._sliced(prepared, self.rows(prepared, run_id))

    def _sliced(self, prepared: PreparedDocument, rows: DocumentRows) -> list[tuple[Statement, Mapping[str, Any]]]:
        templates = self.templates
        out: list[tuple[Statement, Mapping[str, Any]]] = []
        if prepared.existed:
            out.append((templates.delete_previous, {"document": prepared.document_id}))
        out.append((templates.upsert_document, {"rows": rows.document}))
        for statement, part_rows, size in (
            (templates.sections, rows.sections, ROWS_PER_STATEMENT),
            (templates.chunks, rows.chunks, rows.chunks_per_statement),
            (templates.chunk_sections, rows.chunk_sections, ROWS_PER_STATEMENT),
            (templates.next_chunks, rows.next_chunks, ROWS_PER_STATEMENT),
            (templates.subsections, rows.subsections, ROWS_PER_STATEMENT),
        ):
            out.extend((statement, {"rows": part}) for part in _slices(part_rows, size))
        return out

    def _document_row(self, prepared: PreparedDocument, run_id: str) -> dict[str, Any]:
        loaded, source = prepared.loaded, prepared.source
        metadata = source.metadata
        return self.names.document.row(
            {
                "uid": prepared.document_id,
                "source_uri": source.source_uri,
                "title": metadata.title or loaded.title,
                "media_type": loaded.media_type,
                "content_hash": loaded.content_hash,
                "length_bytes": loaded.length_bytes,
                "settings_fingerprint": prepared.settings_fingerprint,
                "page_starts": list(loaded.page_starts) if loaded.page_starts is not None else None,
                "published": metadata.published,
                "publisher": metadata.publisher,
                "url": metadata.url,
                "text_origin": metadata.text_origin,
                "ingested_at": datetime.now(UTC),
                "run_id": run_id,
            }
        )

    def _section_rows(
        self, prepared: PreparedDocument, section_ids: Mapping[int, str], run_id: str
    ) -> list[dict[str, Any]]:
        sections = self.names.section
        return [
            sections.row(
                {
                    "uid": section_ids[s.order],
                    "document_id": prepared.document_id,
                    "title": s.title,
                    "level": s.level,
                    "order": s.order,
                    "start_byte": s.start_byte,
                    "end_byte": s.end_byte,
                    "run_id": run_id,
                }
            )
            for s in prepared.plan.sections
        ]

    def _chunk_rows(self, prepared: PreparedDocument, chunk_ids: Sequence[str], run_id: str) -> list[dict[str, Any]]:
        chunks, utf8 = self.names.chunk, prepared.loaded.utf8
        return [
            chunks.row(
                {
                    "uid": chunk_ids[i],
                    "document_id": prepared.document_id,
                    "order": c.order,
                    "text": utf8[c.start_byte : c.end_byte].decode("utf-8"),
                    "start_byte": c.start_byte,
                    "end_byte": c.end_byte,
                    "token_count": c.token_count,
                    "embedding": prepared.vectors[i],
                    "embedding_set_id": prepared.embedding_set_id,
                    "run_id": run_id,
                }
            )
            for i, c in enumerate(prepared.plan.chunks)
        ]

    def _edge_rows(
        self, plan: ChunkPlan, section_ids: Mapping[int, str], chunk_ids: Sequence[str], stamp: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """Chunk to section, chunk to next chunk, section to parent section."""
        names = self.names
        in_section = [
            names.chunk_section.row(chunk_ids[i], section_ids[c.section_order], stamp)
            for i, c in enumerate(plan.chunks)
            if c.section_order is not None
        ]
        following = [names.next_chunk.row(chunk_ids[i], chunk_ids[i + 1], stamp) for i in range(len(chunk_ids) - 1)]
        parents = [
            names.subsection.row(section_ids[s.order], section_ids[s.parent_order], stamp)
            for s in plan.sections
            if s.parent_order is not None
        ]
        return in_section, following, parents

    async def write(self, prepared: PreparedDocument, run_id: str) -> int:
        """Write one document in one transaction; returns its chunk count.

        A new document whose lists each fit one slice (nearly all) is renewal and writes in
        one statement, one round trip (``ingestion.document.write``); a replaced or larger
        one is the renewal, the retraction and delete, then one statement per slice.
        Raises ``DocumentFailure("lease-lost")`` (nothing written) when this run no
        longer holds the document's lease at the start of the transaction. Transient
        errors are retried whole (``attempts``); the last one is raised.
        """
        renewal = self.leases.parameters(prepared.document_id, run_id)
        rows = self.rows(prepared, run_id)
        if not prepared.existed and rows.fits_one_statement:
            write = self.templates.write_new
            parameters = {**renewal, **rows.parameters()}

            async def work(tx: StoreTransaction) -> None:
                written = await tx.run(write.cypher, parameters, name=write.name)
                if written.value("renewed", 0) != 1:
                    raise DocumentFailure(DocumentErrorCode.LEASE_LOST, "the lease expired or another run took it")
                await self._write_knowledge(tx, prepared, run_id)

        else:
            statements = self._sliced(prepared, rows)  # the rows built above, not again
            renew = self.leases.statements.renew_in_write

            async def work(tx: StoreTransaction) -> None:
                renewed = await tx.run(renew.cypher, renewal, name=renew.name)
                if renewed.value("renewed", 0) != 1:
                    raise DocumentFailure(DocumentErrorCode.LEASE_LOST, "the lease expired or another run took it")
                if prepared.existed:
                    # Mentions and quotes point at the old chunks: they go first, with the facts,
                    # whichever ontology (if any) wrote them.
                    await retract_knowledge(tx, self.names, prepared.document_id)
                for statement, statement_parameters in statements:
                    await tx.run(statement.cypher, statement_parameters, name=statement.name)
                await self._write_knowledge(tx, prepared, run_id)

        await self.store.write(work, attempts=self.attempts)
        return len(prepared.plan.chunks)

    async def _write_knowledge(self, tx: StoreTransaction, prepared: PreparedDocument, run_id: str) -> None:
        if self.knowledge is not None and prepared.knowledge is not None:
            await self.knowledge.write(tx, prepared.document_id, prepared.knowledge, run_id, self.store.tenant)
