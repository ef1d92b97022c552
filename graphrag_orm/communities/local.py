"""A local refresh's plan: which stored top-level subtrees stay whole, which things are detected again.

Pure computation over the stored communities and the facts read now. A stored community is
stale by :func:`~graphrag_orm.communities.service.stale_communities`' rules: its fingerprint
(its members and the facts among them, as stored now) changed, or a member is joined by a
fact to a thing placed in no community. A top-level (level 0) community is kept whole, with
its subtree, when no community of that subtree is stale; the members of the other subtrees
and the things placed nowhere are detected again, on the subgraph the facts among them
induce, with the same options and seed as a build, the resolution scaled by the subgraph's
share of the edge weight (:func:`local_options`).

A fact joining a kept member to a thing detected again is in no induced subgraph: it was
between two top-level communities before (a fact inside one would have made it stale), and
it stays between two. A thing detected again that the induced subgraph leaves alone (its
only facts reach kept members) would be placed nowhere and make those kept subtrees stale;
their subtrees join the things detected again, until none is left alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_orm.communities.detection import GraphFact, fingerprint
from graphrag_orm.communities.options import CommunityOptions

__all__ = ["LocalPlan", "StoredCommunity", "local_options", "plan_refresh"]


@dataclass(frozen=True)
class StoredCommunity:
    """A stored community as a refresh reads it: its level, fingerprint, parent and members now."""

    id: str
    level: int
    fingerprint: str
    parent_id: str | None
    members: tuple[str, ...]


@dataclass(frozen=True)
class LocalPlan:
    """The stored communities kept (ids), those replaced (ids), and the things and facts to detect again."""

    kept: frozenset[str]
    replaced: frozenset[str]
    things: frozenset[str]
    facts: tuple[GraphFact, ...]
    #: The induced subgraph's share of the graph's edge weight (1.0 when it is the whole graph).
    share: float = 1.0


def _root(community: StoredCommunity, by_id: dict[str, StoredCommunity]) -> str:
    seen: set[str] = set()
    while community.parent_id is not None and community.parent_id in by_id and community.id not in seen:
        seen.add(community.id)
        community = by_id[community.parent_id]
    return community.id


def plan_refresh(stored: Sequence[StoredCommunity], facts: Sequence[GraphFact], things: set[str]) -> LocalPlan:
    """Split ``stored`` into the subtrees kept and those replaced; ``things`` are those the facts join now."""
    by_id = {c.id: c for c in stored}
    root_of = {c.id: _root(c, by_id) for c in stored}
    placed: dict[str, set[str]] = defaultdict(set)  # thing -> the roots of the subtrees holding it
    for c in stored:
        for member in c.members:
            placed[member].add(root_of[c.id])
    joined: dict[str, set[str]] = defaultdict(set)
    for fact in facts:
        if fact.source != fact.target:
            joined[fact.source].add(fact.target)
            joined[fact.target].add(fact.source)
    among: dict[str, list[GraphFact]] = defaultdict(list)
    member_sets = {c.id: frozenset(c.members) for c in stored}
    home: dict[tuple[int, str], str] = {(c.level, m): c.id for c in stored for m in c.members}
    for fact in facts:
        for level in {c.level for c in stored}:
            where = home.get((level, fact.source))
            if where is not None and where == home.get((level, fact.target)):
                among[where].append(fact)
    stale_roots: set[str] = set()
    for c in stored:
        members = member_sets[c.id]
        changed = fingerprint(members, among[c.id]) != c.fingerprint
        unplaced = any(other in things and other not in placed for m in members for other in joined.get(m, ()))
        if changed or unplaced:
            stale_roots.add(root_of[c.id])
    while True:
        again = {t for t in things if t not in placed or placed[t] & stale_roots}
        # A thing detected again whose facts reach only kept subtrees would be placed nowhere.
        alone = [t for t in again if joined.get(t) and not any(o in again for o in joined[t])]
        reached = {root for t in alone for o in joined[t] for root in placed.get(o, ())} - stale_roots
        if not reached:
            break
        stale_roots |= reached
    replaced = frozenset(c.id for c in stored if root_of[c.id] in stale_roots)
    kept = frozenset(by_id) - replaced
    induced = tuple(f for f in facts if f.source in again and f.target in again)
    total = _weight(facts)
    share = _weight(induced) / total if total else 1.0
    return LocalPlan(kept=kept, replaced=replaced, things=frozenset(again), facts=induced, share=share)


def _weight(facts: Sequence[GraphFact]) -> int:
    """The edge weight detection gives ``facts``: at least one per fact, one per document stating it."""
    return sum(max(1, len(f.document_ids)) for f in facts if f.source != f.target)


def local_options(options: CommunityOptions, share: float) -> CommunityOptions:
    """``options`` with the resolution scaled by ``share``: modularity's null model on the induced subgraph
    then weighs a community as it does on the whole graph, so the subgraph is not split finer than a
    build would split it (modularity's optimum grows finer as the graph shrinks)."""
    return options.model_copy(update={"resolution": options.resolution * share}) if 0 < share < 1 else options
