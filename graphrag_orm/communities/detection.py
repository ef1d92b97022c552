"""Hierarchical, seeded community detection over things joined by facts (graspologic-native's Leiden).

Pure computation: facts in, communities out. The input is put in one order first (the
library's result depends on the order it is given), and every community is named by a
hash of its level and members, so the same graph, options and seed give the same ids.
The library is the optional ``communities`` extra; without it, ``missing-extra``.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.communities.options import CommunityOptions
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.values import Limit

__all__ = ["COMMUNITIES_EXTRA_MISSING", "DetectedCommunity", "Detection", "GraphFact", "detect", "fingerprint"]

COMMUNITIES_EXTRA_MISSING = "community detection needs the communities extra: pip install 'graphrag-orm[communities]'"


@dataclass(frozen=True, order=True)
class GraphFact:
    """One fact as detection reads it: its ends (thing ids), its type and the documents stating it."""

    source: str
    type: str
    target: str
    document_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class DetectedCommunity:
    """A community at one level: its members, its parent one level up, its fingerprint."""

    id: str
    level: int
    members: tuple[str, ...]
    parent_id: str | None
    fingerprint: str
    facts: int


@dataclass(frozen=True)
class Detection:
    communities: tuple[DetectedCommunity, ...] = ()
    limits_reached: tuple[Limit, ...] = field(default=())


def _leiden() -> Any:
    try:
        from graspologic_native import hierarchical_leiden
    except ImportError:
        raise ConfigurationError(ErrorCode.MISSING_EXTRA, COMMUNITIES_EXTRA_MISSING) from None
    return hierarchical_leiden


def fingerprint(members: Iterable[str], facts: Iterable[GraphFact]) -> str:
    """A hash of the members and of the facts among them (type, ends, documents), in one order."""
    body = json.dumps(
        [sorted(members), sorted([f.source, f.type, f.target, sorted(f.document_ids)] for f in facts)],
        separators=(",", ":"),
    )
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def _community_id(level: int, members: Sequence[str], tenant: str | None = None) -> str:
    """A hash of the level and the members; in a tenanted graph of the tenant too, so two tenants'
    communities never share an id (docs/tenancy.md), whatever their things are named."""
    parts: list[object] = [level, sorted(members)] if tenant is None else [tenant, level, sorted(members)]
    body = json.dumps(parts, separators=(",", ":"))
    return "community-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:24]


def detect(facts: Sequence[GraphFact], options: CommunityOptions, *, tenant: str | None = None) -> Detection:
    """Communities of the things ``facts`` join, level 0 the coarsest, at most ``options.max_levels``.

    ``tenant`` (a tenanted graph's, the store's) goes into each community's id.

    A fact from a thing to itself joins nothing and is left out. Each pair of things is one
    weighted edge: the number of documents stating facts between them (at least one per fact).
    """
    weights: dict[tuple[str, str], float] = defaultdict(float)
    for fact in facts:
        if fact.source == fact.target:
            continue
        pair = (fact.source, fact.target) if fact.source < fact.target else (fact.target, fact.source)
        weights[pair] += max(1, len(fact.document_ids))
    if not weights:
        return Detection()
    edges = [(a, b, weight) for (a, b), weight in sorted(weights.items())]
    clusters = _leiden()(
        edges,
        max_cluster_size=options.max_community_size,
        seed=options.seed,
        resolution=options.resolution,
        use_modularity=True,
        iterations=1,
    )
    by_cluster: dict[tuple[int, int], list[str]] = defaultdict(list)
    parent_of: dict[tuple[int, int], tuple[int, int] | None] = {}
    deepest = 0
    for entry in clusters:
        level, cluster = int(entry.level), int(entry.cluster)
        deepest = max(deepest, level)
        if level >= options.max_levels:
            continue
        by_cluster[(level, cluster)].append(str(entry.node))
        parent = entry.parent_cluster
        parent_of[(level, cluster)] = None if parent is None or level == 0 else (level - 1, int(parent))
    ids = {key: _community_id(key[0], members, tenant) for key, members in by_cluster.items()}
    facts_of: dict[str, list[GraphFact]] = defaultdict(list)
    membership: dict[tuple[int, str], str] = {}
    for key, members in by_cluster.items():
        for member in members:
            membership[(key[0], member)] = ids[key]
    for fact in sorted(facts):
        for level in range(min(deepest + 1, options.max_levels)):
            home = membership.get((level, fact.source))
            if home is not None and home == membership.get((level, fact.target)):
                facts_of[home].append(fact)
    communities: list[DetectedCommunity] = []
    for key, members in by_cluster.items():
        community_id = ids[key]
        parent = parent_of.get(key)
        communities.append(
            DetectedCommunity(
                id=community_id,
                level=key[0],
                members=tuple(sorted(members)),
                parent_id=ids.get(parent) if parent is not None else None,
                fingerprint=fingerprint(members, facts_of[community_id]),
                facts=len(facts_of[community_id]),
            )
        )
    communities.sort(key=lambda c: (c.level, c.members))
    limits: list[Limit] = []
    if deepest >= options.max_levels:
        limits.append(Limit(name=LimitName.COMMUNITY_LEVELS, value=options.max_levels))
    if any(len(c.members) > options.max_community_size for c in communities if c.level == options.max_levels - 1):
        limits.append(Limit(name=LimitName.COMMUNITY_SIZE, value=options.max_community_size))
    return Detection(communities=tuple(communities), limits_reached=tuple(limits))
