"""One transaction per document: renew the lease, replace the document's content, commit.

Inside the transaction, in order: the lease is renewed by a conditional update that
must change exactly one row (else ``lease-lost`` and nothing is written); the
previous version's structural edges, then chunks and sections, are deleted by the
document's key (never ``DETACH DELETE``: an edge the toolkit does not own makes the
delete fail, and the document with it, rather than vanish silently); then the
document, its sections, its chunks with their vectors, and their edges are written
with a few batched UNWIND statements rendered from the model classes. A process
killed at any point leaves the document as it was before, or complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from neomodel import adb

from graphrag_orm.chunking import ChunkPlan, chunk_id, section_id
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import DocumentFailure
from graphrag_orm.extraction.grounding import DocumentKnowledge
from graphrag_orm.extraction.writer import KnowledgeWriter, retract_knowledge
from graphrag_orm.ingestion.leases import Leases
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.models import LexicalModel
from graphrag_orm.sources import Source
from graphrag_orm.store.batches import EdgeWrites, NodeWrites


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

    @property
    def document_id(self) -> str:
        return self.source.document_id


class DocumentWriter:
    """Writes prepared documents of one layout, one transaction each."""

    def __init__(self, model: LexicalModel, leases: Leases, knowledge: KnowledgeWriter | None = None) -> None:
        self.model = model
        self.leases = leases
        self.knowledge = knowledge
        self.documents = NodeWrites(model.document)
        self.sections = NodeWrites(model.section)
        self.chunks = NodeWrites(model.chunk)
        self.chunk_document = EdgeWrites(model.chunk, "document")
        self.chunk_section = EdgeWrites(model.chunk, "section")
        self.next_chunk = EdgeWrites(model.chunk, "next")
        self.section_document = EdgeWrites(model.section, "document")
        self.subsection = EdgeWrites(model.section, "parent")
        # Rendered once: statements depend only on the model classes.
        self._upsert_document = self.documents.upsert_statement()
        self._create_sections = self.sections.create_linked_statement(self.section_document)
        self._create_chunks = self.chunks.create_linked_statement(self.chunk_document)
        layout = model.layout
        chunk, section = self.chunks, self.sections
        chunk_doc = chunk.stored("document_id")
        section_doc = section.stored("document_id")
        # Edges first, then nodes, all found by the document's key.
        self.delete_previous = (
            f"CALL () {{ MATCH (c:{chunk.label} {{{chunk_doc}: $document}})"
            f"-[r:{layout.chunk_document_type}|{layout.chunk_section_type}|{layout.next_chunk_type}]->() DELETE r }} "
            f"CALL () {{ MATCH (s:{section.label} {{{section_doc}: $document}})"
            f"-[r:{layout.section_document_type}|{layout.subsection_type}]->() DELETE r }} "
            f"CALL () {{ MATCH (c:{chunk.label} {{{chunk_doc}: $document}}) DELETE c }} "
            f"CALL () {{ MATCH (s:{section.label} {{{section_doc}: $document}}) DELETE s }}"
        )

    def statements(self, prepared: PreparedDocument, run_id: str) -> list[tuple[str, dict[str, Any]]]:
        """The document's writes after the lease renewal, as (statement, parameters) pairs."""
        loaded, plan, source = prepared.loaded, prepared.plan, prepared.source
        doc_id = prepared.document_id
        fingerprint = plan.fingerprint
        metadata = source.metadata
        document_row = self.documents.row(
            {
                "uid": doc_id,
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
        section_ids = {s.order: section_id(doc_id, loaded.content_hash, fingerprint, s.order) for s in plan.sections}
        section_rows = [
            self.sections.row(
                {
                    "uid": section_ids[s.order],
                    "document_id": doc_id,
                    "title": s.title,
                    "level": s.level,
                    "order": s.order,
                    "start_byte": s.start_byte,
                    "end_byte": s.end_byte,
                    "run_id": run_id,
                }
            )
            for s in plan.sections
        ]
        utf8 = loaded.utf8
        chunk_ids = [chunk_id(doc_id, loaded.content_hash, fingerprint, c.start_byte, c.end_byte) for c in plan.chunks]
        chunk_rows = [
            self.chunks.row(
                {
                    "uid": chunk_ids[i],
                    "document_id": doc_id,
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
            for i, c in enumerate(plan.chunks)
        ]
        stamp = {"run_id": run_id}
        edges: list[tuple[EdgeWrites, list[dict[str, Any]]]] = [
            (
                self.chunk_section,
                [
                    self.chunk_section.row(chunk_ids[i], section_ids[c.section_order], stamp)
                    for i, c in enumerate(plan.chunks)
                    if c.section_order is not None
                ],
            ),
            (
                self.next_chunk,
                [self.next_chunk.row(chunk_ids[i], chunk_ids[i + 1], stamp) for i in range(len(chunk_ids) - 1)],
            ),
            (
                self.subsection,
                [
                    self.subsection.row(section_ids[s.order], section_ids[s.parent_order], stamp)
                    for s in plan.sections
                    if s.parent_order is not None
                ],
            ),
        ]
        out: list[tuple[str, dict[str, Any]]] = [
            (self.delete_previous, {"document": doc_id}),
            (self._upsert_document, {"rows": [document_row]}),
        ]
        # Sections and chunks are created with the edge to their document in one statement.
        if section_rows:
            edge = self.section_document.props(stamp)
            linked = [{"props": row, "target": doc_id, "edge": edge} for row in section_rows]
            out.append((self._create_sections, {"rows": linked}))
        if chunk_rows:
            edge = self.chunk_document.props(stamp)
            linked = [{"props": row, "target": doc_id, "edge": edge} for row in chunk_rows]
            out.append((self._create_chunks, {"rows": linked}))
        out.extend((writes.create_statement(), {"rows": rows}) for writes, rows in edges if rows)
        return out

    async def write(self, prepared: PreparedDocument, run_id: str) -> int:
        """Write one document in one transaction; returns its chunk count.

        Raises ``DocumentFailure("lease-lost")`` (nothing written) when this run no
        longer holds the document's lease at the start of the transaction.
        """
        statements = self.statements(prepared, run_id)
        async with adb.transaction:
            rows, _ = await adb.cypher_query(
                self.leases.renew_statement, self.leases.renew_parameters(prepared.document_id, run_id)
            )
            if rows[0][0] != 1:
                raise DocumentFailure(DocumentErrorCode.LEASE_LOST, "the lease expired or another run took it")
            if prepared.existed:
                # Mentions and quotes point at the old chunks: they go first, with the facts,
                # whichever ontology (if any) wrote them.
                await retract_knowledge(self.chunks.label, self.chunks.stored("document_id"), prepared.document_id)
            for statement, parameters in statements:
                if statement is self.delete_previous and not prepared.existed:
                    continue
                await adb.cypher_query(statement, parameters)
            if self.knowledge is not None and prepared.knowledge is not None:
                await self.knowledge.write(prepared.document_id, prepared.knowledge, run_id)
        return len(prepared.plan.chunks)
