"""What an adoption is asked, what its dry run finds, and what apply and undo did.

Options carry their bounds (``ConfigurationError("invalid-option")`` outside them). A
preview's blockers name a stable code (:class:`~graphrag_orm.codes.ErrorCode`), a count,
and at most ``max_listed`` examples (a document's ``path``, or a node's element id), with
``MaxListed`` in ``limits_reached`` when examples were left out.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, field_validator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.sources import Source, Sources
from graphrag_orm.values import Limit, Options, Value

__all__ = ["AdoptionBlocker", "AdoptionOptions", "AdoptionPreview", "AdoptionReceipt", "UndoReceipt"]


class AdoptionOptions(Options):
    """``source_files`` maps a document's stored ``path`` to its source file: a :class:`Source`
    (``Sources.file(path, uri=...)`` names it by a URI of your choosing) or a file path.

    ``batch_size`` documents are adopted per write transaction, and every statement writes
    at most that many rows; undo removes at most that many elements per transaction.
    """

    source_files: dict[str, Source] = Field(default_factory=dict)
    batch_size: int = Field(500, ge=1, le=10_000, description="documents per transaction, rows per statement")
    max_listed: int = Field(10, ge=0, le=1_000, description="examples listed per blocker")

    @field_validator("source_files", mode="before")
    @classmethod
    def _files_as_sources(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {
            path: Sources.file(item) if isinstance(item, str | os.PathLike) else item for path, item in value.items()
        }


class AdoptionBlocker(Value):
    """Why the graph cannot be adopted as it is: a code, how many elements, examples and what to do."""

    code: ErrorCode
    count: int = Field(ge=0)
    examples: tuple[str, ...] = ()
    message: str


class AdoptionPreview(Value):
    """The dry run: what was found, how it would be grounded, and what blocks (it writes nothing).

    ``documents_placed`` had every chunk placed byte-exact, in order, in its source file;
    ``documents_not_placed`` had a source file that does not hold its chunks as they are
    (those chunks would be chunk-grounded); ``sources_unmatched`` are ``source_files``
    paths no document has. ``steps_pending`` names the schema of :meth:`prepare_steps
    <graphrag_orm.adoption.AdoptionPlan.prepare_steps>` not in the database yet;
    ``indexes_adopted`` the indexes the layout names, found as the layout expects them.
    """

    documents: int
    chunks: int
    document_links: int
    next_links: int
    documents_placed: int
    documents_not_placed: int
    sources_unmatched: int
    chunks_source_grounded: int
    chunks_chunk_grounded: int
    chunks_without_embedding: int
    steps_pending: tuple[str, ...] = ()
    indexes_adopted: tuple[str, ...] = ()
    blockers: tuple[AdoptionBlocker, ...] = ()
    limits_reached: tuple[Limit, ...] = ()

    @property
    def blocked(self) -> bool:
        return bool(self.blockers)


class AdoptionReceipt(Value):
    """One apply: its run, what it keyed and stamped, how chunks were grounded, in how many batches."""

    run_id: str
    documents: int
    chunks: int
    links: int
    documents_placed: int
    chunks_source_grounded: int
    chunks_chunk_grounded: int
    batches: int


class UndoReceipt(Value):
    """One undo: what it took back from documents, chunks and links still carrying the run's id."""

    run_id: str
    documents: int
    chunks: int
    links: int
    batches: int
