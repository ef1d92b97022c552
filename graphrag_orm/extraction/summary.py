"""What extraction reports on the ingestion receipt: kept, pruned with reasons, quarantined, tokens."""

from __future__ import annotations

from enum import StrEnum

from graphrag_orm.values import Value

__all__ = ["ExtractionSummary", "PruneReason", "PrunedItem", "QuarantinedReply"]


class PruneReason(StrEnum):
    """Why a candidate did not reach the graph."""

    UNKNOWN_KIND = "unknown-kind"
    MISSING_NAME = "missing-name"
    NAME_TOO_LONG = "name-too-long"
    NOT_GROUNDED = "not-grounded"
    #: The name is one of the instructions' examples and the passage does not hold it.
    EXAMPLE_NAME = "example-name"
    MENTION_NOT_FOUND = "mention-not-found"
    ALIAS_NOT_FOUND = "alias-not-found"
    QUOTE_NOT_FOUND = "quote-not-found"
    UNKNOWN_SPEAKER = "unknown-speaker"
    NOT_A_SPEAKER = "not-a-speaker"
    NOT_ALLOWED = "relationship-not-allowed"
    UNKNOWN_END = "unknown-end"
    SELF_LOOP = "self-loop"
    OVER_LIMIT = "over-limit"
    REFUSED = "refused-by-verifier"


class PrunedItem(Value):
    """One pruned candidate: what it was (bounded), and why."""

    chunk_id: str
    item: str
    reason: PruneReason
    detail: str | None = None


class QuarantinedReply(Value):
    """A reply that was not JSON for the schema twice; kept (bounded) for a person, never as data."""

    chunk_id: str
    code: str
    problem: str
    text: str


class ExtractionSummary(Value):
    """Extraction's part of an ingestion receipt."""

    chunks: int = 0
    calls: int = 0
    entities: int = 0
    facts: int = 0
    mentions: int = 0
    quotes: int = 0
    flipped: int = 0
    repaired: int = 0
    pruned: tuple[PrunedItem, ...] = ()
    quarantined: tuple[QuarantinedReply, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None

    def __add__(self, other: ExtractionSummary) -> ExtractionSummary:
        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return ExtractionSummary(
            chunks=self.chunks + other.chunks,
            calls=self.calls + other.calls,
            entities=self.entities + other.entities,
            facts=self.facts + other.facts,
            mentions=self.mentions + other.mentions,
            quotes=self.quotes + other.quotes,
            flipped=self.flipped + other.flipped,
            repaired=self.repaired + other.repaired,
            pruned=self.pruned + other.pruned,
            quarantined=self.quarantined + other.quarantined,
            input_tokens=add(self.input_tokens, other.input_tokens),
            output_tokens=add(self.output_tokens, other.output_tokens),
            reasoning_tokens=add(self.reasoning_tokens, other.reasoning_tokens),
        )
