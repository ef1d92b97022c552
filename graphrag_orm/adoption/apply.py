"""Apply: one run that only adds keys, spans and run ids to the graph another library wrote.

The run node is written first (Running), so every element stamped with its id is owned
from the start; then pages of ``batch_size`` documents still without a key, by path, each
read and written in one write transaction (nodes found by element id in that same
transaction); then the run is Completed with its counts. A failure marks the run Failed
and raises: what was written carries the run id, so :func:`~graphrag_orm.adoption.undo.undo`
takes it back. Each statement writes at most ``batch_size`` rows. What apply writes on a
node is exactly :attr:`AdoptionStatements.document_keys` / ``chunk_keys``: nothing the other
library stored, no label and no index changes. In a tenanted graph the document ids are
qualified by ``tenant`` (as ingestion's are), and the page writes stamp the store's
``$tenant`` (:class:`~graphrag_orm.adoption.statements.AdoptionStatements`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.adoption.identity import RUN_PREFIX, adopted_chunk_id
from graphrag_orm.adoption.placing import GroundedDocument, ground
from graphrag_orm.adoption.statements import AdoptionStatements
from graphrag_orm.adoption.values import AdoptionOptions, AdoptionReceipt
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.evidence import GROUNDING_PROPERTY, Grounding
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.models import LexicalModel
from graphrag_orm.store import Store, StoreTransaction

__all__ = ["Applier", "run_fingerprint"]


def run_fingerprint(layout: Layout, embedding_set: EmbeddingSet) -> str:
    """``adopt:`` and a digest of the layout and embedding set the run adopted under."""
    digest = hashlib.sha256(f"{layout!r}|{embedding_set.id}".encode()).hexdigest()
    return f"{RUN_PREFIX}{digest}"


@dataclass
class _Tally:
    documents: int = 0
    chunks: int = 0
    links: int = 0
    placed: int = 0
    source_chunks: int = 0
    batches: int = 0


class Applier:
    """Writes one adoption run of ``model``'s graph; see the module's docstring."""

    def __init__(
        self,
        store: Store,
        model: LexicalModel,
        statements: AdoptionStatements,
        embedding_set: EmbeddingSet,
        options: AdoptionOptions,
        loaders: LoaderRegistry,
        *,
        tenant: str | None = None,
    ) -> None:
        self.store = store
        self.tenant = tenant
        self.model = model
        self.statements = statements
        self.embedding_set = embedding_set
        self.options = options
        self.loaders = loaders

    async def apply(self, run_id: str, documents: int) -> AdoptionReceipt:
        """Adopt every document without a key (``documents`` bounds the pages); the run is ``run_id``."""
        await self._start(run_id)
        tally = _Tally()
        try:
            # Each page keys its documents, so the next read finds the next ones; the bound stops a loop
            # should a page ever key nothing.
            for _ in range(documents // self.options.batch_size + 2):
                adopted = await self.store.write(lambda tx: self._page(tx, run_id, tally))
                if not adopted:
                    break
                tally.batches += 1
        except BaseException:
            await self._finish(run_id, "Failed", tally)
            raise
        await self._finish(run_id, "Completed", tally)
        return AdoptionReceipt(
            run_id=run_id,
            documents=tally.documents,
            chunks=tally.chunks,
            links=tally.links,
            documents_placed=tally.placed,
            chunks_source_grounded=tally.source_chunks,
            chunks_chunk_grounded=tally.chunks - tally.source_chunks,
            batches=tally.batches,
        )

    async def _page(self, tx: StoreTransaction, run_id: str, tally: _Tally) -> int:
        st = self.statements
        rows = await tx.run(st.page, {"limit": self.options.batch_size}, name="adoption.apply.page")
        documents: list[dict[str, Any]] = []
        chunks: list[dict[str, Any]] = []
        page = _Tally()
        for row in rows:
            ordered = sorted(row["chunks"], key=lambda c: int(c["index"]))
            path = str(row["path"])
            grounded = await ground(
                path,
                [str(c["text"]) for c in ordered],
                self.options.source_files.get(path),
                self.loaders,
                tenant=self.tenant,
            )
            documents.append({"element": row["element"], "props": self._document(grounded, run_id)})
            chunks += [
                {"element": c["element"], "props": self._chunk(grounded, c, span, run_id)}
                for c, span in zip(ordered, grounded.spans, strict=True)
            ]
            page.documents += 1
            page.chunks += len(ordered)
            if grounded.grounding is Grounding.SOURCE:
                page.placed += 1
                page.source_chunks += len(ordered)
        for batch in _slices(documents, self.options.batch_size):
            await tx.run(st.set_documents, {"rows": batch}, name="adoption.apply.documents")
        for batch in _slices(chunks, self.options.batch_size):
            await tx.run(st.set_chunks, {"rows": batch}, name="adoption.apply.chunks")
            elements = [row["element"] for row in batch]
            stamped = await tx.run(st.stamp_links, {"elements": elements, "run": run_id}, name="adoption.apply.links")
            page.links += int(stamped.value("links", 0))
        # Counted only once the page's writes all went out (a retried transaction starts again).
        tally.documents += page.documents
        tally.chunks += page.chunks
        tally.links += page.links
        tally.placed += page.placed
        tally.source_chunks += page.source_chunks
        return page.documents

    def _document(self, grounded: GroundedDocument, run_id: str) -> dict[str, Any]:
        doc = self.model.names.document
        return {
            doc.key: grounded.document_id,
            doc.stored("source_uri"): grounded.source_uri,
            doc.stored("media_type"): grounded.media_type,
            doc.stored("content_hash"): grounded.content_hash,
            doc.stored("length_bytes"): grounded.length_bytes,
            self.model.names.run_id: run_id,
        }

    def _chunk(
        self, grounded: GroundedDocument, chunk: Mapping[str, Any], span: tuple[int, int], run_id: str
    ) -> dict[str, Any]:
        ch = self.model.names.chunk
        return {
            ch.key: adopted_chunk_id(grounded.document_id, int(chunk["index"])),
            ch.stored("document_id"): grounded.document_id,
            ch.stored("start_byte"): span[0],
            ch.stored("end_byte"): span[1],
            GROUNDING_PROPERTY: grounded.grounding.value,
            # Only an embedded chunk names the set its vector belongs to.
            ch.stored("embedding_set_id"): self.embedding_set.id if chunk["embedded"] else None,
            self.model.names.run_id: run_id,
        }

    async def _start(self, run_id: str) -> None:
        run = self.model.names.run
        row = run.row(
            {
                "uid": run_id,
                "started_at": dt.datetime.now(dt.UTC),
                "status": "Running",
                "settings_fingerprint": run_fingerprint(self.model.layout, self.embedding_set),
            }
        )

        async def work(tx: StoreTransaction) -> None:
            await tx.run(self.statements.start_run, {"rows": [row]}, name="adoption.run.start")

        await self.store.write(work)

    async def _finish(self, run_id: str, status: str, tally: _Tally) -> None:
        run = self.model.names.run
        counts = {
            run.stored("status"): status,
            run.stored("documents_ingested"): tally.documents,
            run.stored("chunks_written"): tally.chunks,
        }

        async def work(tx: StoreTransaction) -> None:
            await tx.run(self.statements.finish_run, {"id": run_id, "counts": counts}, name="adoption.run.finish")

        await self.store.write(work)


def _slices(rows: Sequence[dict[str, Any]], size: int) -> list[Sequence[dict[str, Any]]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]
