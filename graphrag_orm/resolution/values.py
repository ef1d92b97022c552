"""The values of entity resolution: suggestions, a plan's preview and blockers, an undo's report.

All are frozen pydantic models with camelCase JSON, so the suggestions file a person edits
(``graphrag-orm resolve suggest --out``) is :class:`Suggestions` as JSON, read back as it is.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.values import Limit, Options, Value

__all__ = [
    "Blocker",
    "MergeCounts",
    "MergePreview",
    "SuggestOptions",
    "Suggestion",
    "SuggestionRule",
    "Suggestions",
    "ThingRef",
    "UndoReport",
]

#: Defaults and maxima of :class:`SuggestOptions`.
DEFAULT_MAX_THINGS = 20_000
MAX_MAX_THINGS = 1_000_000
DEFAULT_MAX_SUGGESTIONS = 1_000
MAX_MAX_SUGGESTIONS = 100_000


class SuggestionRule(StrEnum):
    """Why two things of one class are probably one."""

    #: The names are equal once case, extra whitespace and a leading "the", "a" or "an" are ignored.
    SAME_NAME = "same-name"
    #: One's name, read the same way, is one of the other's aliases (directly or through the group).
    ALIAS = "alias"


class SuggestOptions(Options):
    """Bounds of :meth:`Resolution.suggest`; each one reached is reported in ``limits_reached``."""

    #: Things read per class, in id order (``MaxThings``).
    max_things: int = Field(DEFAULT_MAX_THINGS, ge=1, le=MAX_MAX_THINGS)
    #: Suggestions returned, in their order (``MaxSuggestions``).
    max_suggestions: int = Field(DEFAULT_MAX_SUGGESTIONS, ge=1, le=MAX_MAX_SUGGESTIONS)


class ThingRef(Value):
    """A thing as the suggestion saw it: id, name, aliases and mention count."""

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    mentions: int = Field(0, ge=0)


class Suggestion(Value):
    """Merge ``merged`` into ``kept`` (both of ``kind``): ``kept`` has the most mentions of its group."""

    kind: str
    rule: SuggestionRule
    kept: ThingRef
    merged: ThingRef

    @model_validator(mode="after")
    def _two_things(self) -> Suggestion:
        if self.kept.id == self.merged.id:
            raise ValueError("a thing cannot be merged into itself")
        return self


class Suggestions(Value):
    """The suggestions in a stable order (class, kept name, merged name, ids) and the bounds reached."""

    suggestions: tuple[Suggestion, ...] = ()
    limits_reached: tuple[Limit, ...] = ()


class Blocker(Value):
    """Why a plan cannot be applied: ``code`` for the merge at ``merge`` (its place in the plan)."""

    code: ErrorCode
    merge: int = Field(ge=0)
    thing_id: str


class MergeCounts(Value):
    """What one merge of a plan would move (or, applied, moved)."""

    merge: int = Field(ge=0)
    kind: str
    kept_id: str
    merged_id: str
    mentions: int = Field(0, ge=0)
    quotes: int = Field(0, ge=0)
    #: Facts of the merged thing moved to the kept thing.
    facts_repointed: int = Field(0, ge=0)
    #: Facts the kept thing already had: their ``documentIds`` become the union.
    facts_unioned: int = Field(0, ge=0)
    #: Facts that would join the kept thing to itself.
    self_facts_dropped: int = Field(0, ge=0)
    #: Names the kept thing gains as aliases.
    aliases_added: int = Field(0, ge=0)


class MergePreview(Value):
    """A plan's counts, merge by merge, and its blockers (none: it can be applied)."""

    merges: tuple[MergeCounts, ...] = ()
    blockers: tuple[Blocker, ...] = ()

    @property
    def blocked(self) -> bool:
        return bool(self.blockers)

    def total(self, field: str) -> int:
        """The sum of one count over the merges (``"mentions"``, ``"facts_repointed"``, ...)."""
        return sum(int(getattr(merge, field)) for merge in self.merges)


class UndoReport(Value):
    """What an undo put back."""

    run_id: str
    kind: str
    kept_id: str
    merged_id: str
    mentions: int = Field(0, ge=0)
    quotes: int = Field(0, ge=0)
    #: Facts of the merged thing recreated (self-facts included).
    facts_restored: int = Field(0, ge=0)
    #: Facts the merge had created on the kept thing, deleted.
    facts_removed: int = Field(0, ge=0)
    #: Facts of the kept thing whose properties were put back.
    facts_reset: int = Field(0, ge=0)
