"""The catalog service: lists and shows what is stored, and resolves document references. Reads only.

Every list is bounded: a ``limit`` from 1 to its maximum (a value outside is
``ConfigurationError("invalid-option")``), and a list cut at its limit names
``MaxListed`` in ``limits_reached`` and carries the ``total``, so the rest is never
silently dropped. Nothing here returns stored text or embeddings.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphrag_orm.catalog.statements import CatalogStatements
from graphrag_orm.catalog.values import CatalogChunk, DocumentDetail, DocumentList, DocumentSummary, RunList, RunSummary
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import ConfigurationError, DocumentNotResolved
from graphrag_orm.evidence import Grounding
from graphrag_orm.models import LexicalModel
from graphrag_orm.sources import Sources, document_id, normalize_uri
from graphrag_orm.store import Store
from graphrag_orm.values import Limit

__all__ = [
    "DEFAULT_CHUNK_LIMIT",
    "DEFAULT_LIST_LIMIT",
    "MAX_CHUNK_LIMIT",
    "MAX_LIST_LIMIT",
    "MIN_PREFIX",
    "CatalogService",
]

DEFAULT_LIST_LIMIT = 50
MAX_LIST_LIMIT = 1_000
DEFAULT_CHUNK_LIMIT = 200
MAX_CHUNK_LIMIT = 10_000
#: The fewest hex digits an id prefix may have (16.7 million values: few collisions in a real graph).
MIN_PREFIX = 6

_HEX = re.compile(r"[0-9a-f]+")
_ID_LENGTH = 64


def _bounded(limit: int, maximum: int, what: str) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise ConfigurationError(ErrorCode.INVALID_OPTION, f"{what} must be from 1 to {maximum:,}, not {limit!r}")
    return limit


def _time(value: Any) -> Any:
    """A driver temporal as a Python datetime (None stays None)."""
    return value.to_native() if hasattr(value, "to_native") else value


def _summary(row: Mapping[str, Any]) -> DocumentSummary:
    return DocumentSummary(
        id=row["id"],
        source_uri=row["sourceUri"] or "",
        title=row["title"],
        media_type=row["mediaType"],
        length_bytes=row["lengthBytes"],
        chunks=int(row["chunks"] or 0),
        run_id=row["runId"],
        ingested_at=_time(row["ingestedAt"]),
    )


class CatalogService:
    """Reads of one layout's documents and runs, through ``store``."""

    def __init__(self, store: Store, model: LexicalModel) -> None:
        self.store = store
        self.model = model
        self.statements = CatalogStatements.render(model.names)

    async def documents(self, limit: int = DEFAULT_LIST_LIMIT, *, among: Sequence[str] | None = None) -> DocumentList:
        """Stored documents by source URI, at most ``limit`` (1..1,000), with the total count.

        With ``among`` (document ids, as a resolved scope gives them), only those of them
        that are stored are listed and counted.
        """
        _bounded(limit, MAX_LIST_LIMIT, "limit")
        st = self.statements
        if among is None:
            total = int((await self.store.read(st.count_documents, name="catalog.count_documents")).value())
            rows = await self.store.read(st.documents, {"limit": limit}, name="catalog.documents")
        else:
            ids = list(among)
            counted = await self.store.read(st.count_documents_among, {"ids": ids}, name="catalog.count_documents")
            total = int(counted.value())
            rows = await self.store.read(st.documents_among, {"ids": ids, "limit": limit}, name="catalog.documents")
        documents = tuple(_summary(row) for row in rows)
        cut = (Limit(name=LimitName.MAX_LISTED, value=limit),) if total > len(documents) else ()
        return DocumentList(documents=documents, total=total, limits_reached=cut)

    async def runs(self, limit: int = DEFAULT_LIST_LIMIT) -> RunList:
        """Ingestion runs, newest first, at most ``limit`` (1..1,000), with the total count."""
        _bounded(limit, MAX_LIST_LIMIT, "limit")
        total = int((await self.store.read(self.statements.count_runs, name="catalog.count_runs")).value())
        rows = await self.store.read(self.statements.runs, {"limit": limit}, name="catalog.runs")
        runs = tuple(
            RunSummary(
                id=row["id"],
                status=row["status"] or "",
                started_at=_time(row["startedAt"]),
                completed_at=_time(row["completedAt"]),
                documents_ingested=int(row["documentsIngested"] or 0),
                documents_unchanged=int(row["documentsUnchanged"] or 0),
                documents_failed=int(row["documentsFailed"] or 0),
                chunks_written=int(row["chunksWritten"] or 0),
                failure_reason=row["failureReason"],
            )
            for row in rows
        )
        cut = (Limit(name=LimitName.MAX_LISTED, value=limit),) if total > len(runs) else ()
        return RunList(runs=runs, total=total, limits_reached=cut)

    async def document(self, reference: str, *, chunk_limit: int = DEFAULT_CHUNK_LIMIT) -> DocumentDetail:
        """One document's metadata and its first ``chunk_limit`` (1..10,000) chunk spans, in order.

        ``reference`` is resolved as :meth:`resolve` does; no text is read.
        """
        _bounded(chunk_limit, MAX_CHUNK_LIMIT, "chunk_limit")
        found = await self.resolve(reference)
        row = (await self.store.read(self.statements.document, {"id": found}, name="catalog.document")).single()
        if row is None:  # removed between the two reads
            raise self._not_found(reference)
        spans = await self.store.read(
            self.statements.chunks, {"id": found, "limit": chunk_limit}, name="catalog.chunks"
        )
        chunks = tuple(
            CatalogChunk(
                id=span["id"],
                order=int(span["order"]),
                start_byte=int(span["startByte"]),
                end_byte=int(span["endByte"]),
                token_count=span["tokenCount"],
                section=span["section"],
            )
            for span in spans
        )
        count = int(row["chunks"] or 0)
        summary = _summary(row)
        return DocumentDetail(
            **summary.model_dump(exclude={"chunks"}),
            content_hash=row["contentHash"],
            published=row["published"],
            publisher=row["publisher"],
            url=row["url"],
            text_origin=row["textOrigin"],
            pages=row["pages"],
            sections=int(row["sections"] or 0),
            chunk_count=count,
            chunks=chunks,
            limits_reached=(Limit(name=LimitName.MAX_LISTED, value=chunk_limit),) if count > len(chunks) else (),
        )

    async def grounding(self, document_id: str) -> Grounding:
        """What the document's spans are spans of: ``CHUNK`` when any of its chunks is grounded in
        its own stored text only (an adopted chunk no source placed), else ``SOURCE``."""
        found = await self.store.read(
            self.statements.chunk_grounded,
            {"id": document_id, "chunk": Grounding.CHUNK.value},
            name="catalog.grounding",
        )
        return Grounding.CHUNK if found.value("grounded", False) else Grounding.SOURCE

    async def resolve(self, reference: str) -> str:
        """The id of the one stored document ``reference`` names.

        Tried in order: a full id (64 hex digits); a prefix of at least six hex digits
        that exactly one stored id starts with; a source URI (normalised as ingestion
        does, e.g. ``https://example.org/faq``); a path, named as ``Sources.file`` names
        it (its absolute ``file:`` URI; the file need not exist any more). Raises
        ``DocumentNotResolved``: ``ambiguous-id`` for a prefix several ids start with
        (the message says how many), ``document-not-found`` when nothing matches.
        """
        text = reference.strip() if isinstance(reference, str) else ""
        if not text:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "a document reference must not be empty")
        lowered = text.lower()
        if len(lowered) >= MIN_PREFIX and _HEX.fullmatch(lowered):
            if len(lowered) == _ID_LENGTH and await self._existing([lowered]):
                return lowered
            if len(lowered) < _ID_LENGTH:
                row = (
                    await self.store.read(self.statements.prefix, {"prefix": lowered}, name="catalog.prefix")
                ).single() or {}
                matches = int(row.get("matches") or 0)
                if matches == 1:
                    return str(row["id"])
                if matches > 1:
                    raise DocumentNotResolved(
                        ErrorCode.AMBIGUOUS_ID,
                        f"{matches:,} documents have ids starting with {text!r}: give more of the id",
                    )
        # A tenanted graph's ids are the tenant's (docs/tenancy.md); without a tenant its store refuses.
        tenant = self.store.tenant.value if self.model.layout.tenanted and self.store.tenant is not None else None
        candidates = [document_id(uri, tenant) for uri in self._uris(text)]
        existing = await self._existing(candidates)
        for candidate in candidates:
            if candidate in existing:
                return candidate
        raise self._not_found(reference)

    async def resolve_all(self, references: Iterable[str]) -> tuple[str, ...]:
        """:meth:`resolve` for each reference, in order, each id once."""
        resolved: list[str] = []
        for reference in references:
            found = await self.resolve(reference)
            if found not in resolved:
                resolved.append(found)
        return tuple(resolved)

    @staticmethod
    def _uris(text: str) -> list[str]:
        """The source URIs ``text`` may name: itself as a URI, and the file URI of it as a path."""
        uris: list[str] = []
        with contextlib.suppress(ConfigurationError):  # not an absolute URI
            uris.append(normalize_uri(text))
        with contextlib.suppress(ConfigurationError, OSError, ValueError):  # not a path either
            uris.append(Sources.file(text).source_uri)
        return uris

    async def _existing(self, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        result = await self.store.read(self.statements.existing, {"ids": ids}, name="catalog.existing")
        return {str(found) for found in result.column("id")}

    @staticmethod
    def _not_found(reference: str) -> DocumentNotResolved:
        return DocumentNotResolved(
            ErrorCode.DOCUMENT_NOT_FOUND,
            f"no stored document has the id, id prefix (at least {MIN_PREFIX} hex digits), source URI or path "
            f"{reference!r}; `graphrag-orm documents` lists them",
        )
