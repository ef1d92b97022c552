"""The exception hierarchy: short, with stable ``code`` attributes.

Every error the toolkit raises on purpose is a :class:`GraphRagError` with a
stable ``code`` string (see :mod:`graphrag_orm.codes` for per-document codes).
Messages are for people; codes are for programs.
"""

from __future__ import annotations


class GraphRagError(Exception):
    """Base of every deliberate error; ``code`` is stable across releases."""

    code: str = "graphrag-error"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"


class ConfigurationError(GraphRagError, ValueError):
    """An option, layout or embedding set outside its bounds (``invalid-option``, ...)."""


class DatabaseUnavailable(GraphRagError):
    """Neo4j could not be reached (``database-unavailable``)."""


class StoreNotConnected(GraphRagError):
    """A statement was sent before ``connect()`` gave the store a driver (``not-connected``)."""


class SchemaMismatch(GraphRagError):
    """The database schema differs from what the toolkit needs (``schema-mismatch``)."""


class MigrationError(GraphRagError):
    """A migration was refused; nothing was applied past the refusal."""


class LoadError(GraphRagError):
    """A source could not be loaded; ``code`` is a document error code."""


class DocumentFailure(GraphRagError):
    """One document's work failed with a document error code (internal to ingestion)."""


class GraphRefused(GraphRagError):
    """Maintenance refused to touch nodes the toolkit did not write (``foreign-graph``)."""
