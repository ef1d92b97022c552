"""Entity resolution with exact undo: suggest merges, plan and apply the accepted ones, undo any.

See :mod:`graphrag_orm.resolution.service` and docs/resolution.md.
"""

from graphrag_orm.errors import MergeError, UndoRefused
from graphrag_orm.resolution.plan import MergePlan
from graphrag_orm.resolution.service import Resolution
from graphrag_orm.resolution.suggestions import resolution_key
from graphrag_orm.resolution.values import (
    Blocker,
    MergeCounts,
    MergePreview,
    Suggestion,
    SuggestionRule,
    Suggestions,
    SuggestOptions,
    ThingRef,
    UndoReport,
)

__all__ = [
    "Blocker",
    "MergeCounts",
    "MergeError",
    "MergePlan",
    "MergePreview",
    "Resolution",
    "SuggestOptions",
    "Suggestion",
    "SuggestionRule",
    "Suggestions",
    "ThingRef",
    "UndoRefused",
    "UndoReport",
    "resolution_key",
]
