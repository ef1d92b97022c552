"""The keys adoption gives: a document's from its source URI, a chunk's from its document and index.

A document named by a source file takes that file's URI (``Source.source_uri``); any
other takes ``adopted:`` and its stored ``path``, as it is (no URI normalisation: a path
may hold spaces). Its id is the SHA-256 of that URI, as for ingested documents. A
chunk's id is the SHA-256 of ``<document id>:<index>``, so the same graph adopted again
gets the same keys. Adoption runs are ``IngestionRun`` nodes whose
``settingsFingerprint`` starts with :data:`RUN_PREFIX`.
"""

from __future__ import annotations

import hashlib
from typing import Final

from graphrag_orm.sources import document_id

__all__ = ["ADOPTED_SCHEME", "PATH_PROPERTY", "RUN_PREFIX", "adopted_chunk_id", "adopted_uri", "document_id"]

#: The source URI scheme of a document adopted without a source file.
ADOPTED_SCHEME: Final = "adopted:"
#: Where neo4j-graphrag stores a document's path (its only name for it).
PATH_PROPERTY: Final = "path"
#: The start of an adoption run's ``settingsFingerprint``.
RUN_PREFIX: Final = "adopt:"


def adopted_uri(path: str) -> str:
    """``adopted:`` and ``path``, as stored."""
    return ADOPTED_SCHEME + path


def adopted_chunk_id(document: str, index: int) -> str:
    """SHA-256 (lower-case hex) of ``<document id>:<index>``."""
    return hashlib.sha256(f"{document}:{index}".encode()).hexdigest()
