"""What a re-embedding plan reports: the preview (reads only) and one receipt per step."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from graphrag_orm.retry import RetrySummary
from graphrag_orm.values import Limit, Value

__all__ = ["BackfillReceipt", "CleanupReceipt", "CompleteReceipt", "ReembeddingPreview", "ReembeddingStage"]


class ReembeddingStage(StrEnum):
    """Where the graph is in the plan, read from the database; the next step is in brackets.

    ``Planned`` (apply ``prepare_steps``), ``Prepared`` (backfill), ``Backfilling`` (backfill
    again), ``Backfilled`` (cut over, then ``complete``), ``Completing`` (complete again),
    ``Completed`` (``cleanup`` and apply ``cleanup_steps``), ``CleanedUp`` (nothing left).
    """

    PLANNED = "Planned"
    PREPARED = "Prepared"
    BACKFILLING = "Backfilling"
    BACKFILLED = "Backfilled"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    CLEANED_UP = "CleanedUp"


class ReembeddingPreview(Value):
    """The plan's steps and its progress, as the database holds it now.

    ``backfilled`` counts chunks whose staging vector is from the new set (staged, or
    already completed); ``to_do`` the others; ``completed`` the chunks whose
    ``embeddingSetId`` names the new set with a vector under the staging property;
    ``old_vectors`` the chunks that still hold a vector under the live property.
    ``*_index_state`` is the index's state (``ONLINE``, ``POPULATING``, ...) or None when absent.
    """

    from_set_id: str
    to_set_id: str
    live_property: str
    staging_property: str
    old_index: str
    new_index: str
    old_index_state: str | None
    new_index_state: str | None
    stage: ReembeddingStage
    chunks: int = Field(ge=0)
    backfilled: int = Field(ge=0)
    to_do: int = Field(ge=0)
    completed: int = Field(ge=0)
    old_vectors: int = Field(ge=0)
    prepare_cypher: tuple[str, ...]
    cleanup_cypher: tuple[str, ...]


class BackfillReceipt(Value):
    """One ``backfill`` call: chunks embedded and written, pages, calls, retries, time, what is left.

    ``chunks_left`` is what the next call would embed (0 when the backfill is done);
    ``limits_reached`` holds ``MaxPages`` when the call stopped at ``max_pages``.
    """

    from_set_id: str
    to_set_id: str
    chunks_embedded: int = Field(ge=0)
    pages: int = Field(ge=0)
    embedding_calls: int = Field(ge=0)
    #: Tokens the embedder reported, or None when it reported none.
    input_tokens: int | None = None
    retries: RetrySummary = RetrySummary()
    seconds: float = Field(ge=0.0)
    chunks_left: int = Field(ge=0)
    limits_reached: tuple[Limit, ...] = ()


class CompleteReceipt(Value):
    """One ``complete`` call: chunks whose ``embeddingSetId`` now names the new set.

    ``chunks_not_backfilled`` have no staging vector from the new set: backfill them, then
    complete again (the health report counts them meanwhile).
    """

    to_set_id: str
    chunks_completed: int = Field(ge=0)
    pages: int = Field(ge=0)
    chunks_not_backfilled: int = Field(ge=0)
    seconds: float = Field(ge=0.0)
    limits_reached: tuple[Limit, ...] = ()


class CleanupReceipt(Value):
    """One ``cleanup`` call: old vectors removed, and old vectors kept on chunks not completed."""

    from_set_id: str
    old_vectors_removed: int = Field(ge=0)
    pages: int = Field(ge=0)
    chunks_not_completed: int = Field(ge=0)
    seconds: float = Field(ge=0.0)
    limits_reached: tuple[Limit, ...] = ()
