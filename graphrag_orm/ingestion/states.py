"""What is stored of a document, read before its lease and compared with what would be written.

A document whose content hash, settings fingerprint and metadata are already stored is
``unchanged`` and not rewritten, so a resumed run skips what is done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from graphrag_orm.ingestion.statements import STATE_FIELDS, DocumentStatements
from graphrag_orm.ingestion.waiting import Fresh
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.sources import Source
from graphrag_orm.store import Store

__all__ = ["PREFETCH_WINDOW", "DocumentStates", "StoredState", "compare"]

StoredState = Literal["absent", "changed", "unchanged"]

#: Documents whose stored state one prefetch read asks for.
PREFETCH_WINDOW = 1000


def compare(stored: Mapping[str, Any] | None, source: Source, loaded: LoadedDocument, fingerprint: str) -> StoredState:
    """``absent``, ``changed`` or ``unchanged``: same bytes, same settings and same metadata."""
    if not stored or stored.get("content_hash") is None:
        return "absent"
    metadata = source.metadata
    wanted = {
        "content_hash": loaded.content_hash,
        "settings_fingerprint": fingerprint,
        "title": metadata.title or loaded.title,
        "published": metadata.published,
        "publisher": metadata.publisher,
        "url": metadata.url,
        "text_origin": metadata.text_origin,
    }
    return "unchanged" if all(stored.get(field) == wanted[field] for field in STATE_FIELDS) else "changed"


class DocumentStates:
    """Reads the stored state (and lease) of documents; every statement goes through ``store``."""

    def __init__(self, store: Store, statements: DocumentStatements) -> None:
        self.store = store
        self._documents = statements

    async def prefetch(self, sources: Sequence[Source]) -> dict[str, dict[str, Any]]:
        """What is stored for every source's document, in one read per :data:`PREFETCH_WINDOW` documents."""
        statement = self._documents.prefetch_states
        found: dict[str, dict[str, Any]] = {}
        ids = [source.document_id for source in sources]
        for start in range(0, len(ids), PREFETCH_WINDOW):
            window = ids[start : start + PREFETCH_WINDOW]
            result = await self.store.read(statement.cypher, {"ids": window}, name=statement.name)
            found.update({row["document"]: row for row in result})
        return found

    async def window(self, sources: Sequence[Source]) -> dict[str, Fresh]:
        """What is stored and leased of ``sources``' documents, in one read (see :class:`FreshStates`)."""
        statement = self._documents.window_states
        ids = [source.document_id for source in sources]
        result = await self.store.read(statement.cypher, {"ids": ids}, name=statement.name)
        return {
            str(row["document"]): Fresh(state=None if row["leased"] else row, held=bool(row["live"])) for row in result
        }

    async def stored(self, source: Source, loaded: LoadedDocument, fingerprint: str) -> StoredState:
        """The one document's state against ``loaded`` and ``fingerprint``."""
        statement = self._documents.state
        result = await self.store.read(statement.cypher, {"id": source.document_id}, name=statement.name)
        return compare(result.single(), source, loaded, fingerprint)
