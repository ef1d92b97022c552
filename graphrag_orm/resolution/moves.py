"""What one merge does to facts and aliases (pure: the preview and the merge both use it).

A fact of the merged thing, seen from it as (direction, type, other end):

- whose other end is the kept thing or the merged thing itself would join the kept thing
  to itself: it is dropped;
- that the kept thing already has (same direction, type and other end) is unioned: the kept
  fact's ``documentIds`` become the sorted union, its other properties stay;
- any other is re-pointed: the same fact, every property kept, from (or to) the kept thing.

The kept thing's aliases gain the merged thing's name and aliases (never its own name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrag_orm.ontology import join_aliases, split_aliases

__all__ = ["FactMoves", "SeenFact", "merged_aliases", "plan_facts", "union_documents"]

DOCUMENT_IDS = "documentIds"


@dataclass(frozen=True)
class SeenFact:
    """A fact as read from one thing; ``element`` and ``other_element`` only inside a transaction."""

    type: str
    outgoing: bool
    other_id: str
    props: dict[str, Any] = field(default_factory=dict)
    element: str = ""
    other_element: str = ""
    other_kind: str = ""

    @property
    def key(self) -> tuple[bool, str, str]:
        return (self.outgoing, self.type, self.other_id)


@dataclass(frozen=True)
class FactMoves:
    repointed: list[SeenFact]
    #: (the merged thing's fact, the kept thing's fact it joins, the kept fact's new properties)
    unioned: list[tuple[SeenFact, SeenFact, dict[str, Any]]]
    dropped: list[SeenFact]


def union_documents(*lists: Sequence[str] | None) -> list[str]:
    return sorted({document for ids in lists for document in (ids or ())})


def plan_facts(kept_id: str, merged_id: str, merged: Sequence[SeenFact], kept: Sequence[SeenFact]) -> FactMoves:
    """Sort the merged thing's facts into re-pointed, unioned and dropped."""
    own = {fact.key: fact for fact in kept}
    moves = FactMoves([], [], [])
    joined: dict[tuple[bool, str, str], dict[str, Any]] = {}
    for fact in merged:
        if fact.other_id in (kept_id, merged_id):
            moves.dropped.append(fact)
        elif fact.key in own:
            target = own[fact.key]
            props = joined.get(fact.key, dict(target.props))
            props[DOCUMENT_IDS] = union_documents(props.get(DOCUMENT_IDS), fact.props.get(DOCUMENT_IDS))
            joined[fact.key] = props
            moves.unioned.append((fact, target, props))
        else:
            moves.repointed.append(fact)
    return moves


def merged_aliases(
    kept_name: str, kept_aliases: str | None, merged_name: str, merged_aliases: str | None
) -> tuple[str | None, int]:
    """The kept thing's new stored aliases and how many it gained."""
    before = set(split_aliases(kept_aliases))
    wanted = before | {merged_name} | set(split_aliases(merged_aliases))
    after = join_aliases({alias for alias in wanted if alias.strip() != kept_name.strip()})
    return after, max(0, len(split_aliases(after)) - len(split_aliases(join_aliases(before))))
