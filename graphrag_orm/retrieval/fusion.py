"""Reciprocal rank fusion: ranks, never raw scores, are combined.

Each route's list is ranked from 1; an item's fused score is the sum over routes of
``1 / (k + rank)`` with k = 60. Items are keyed by chunk id; ties are broken by chunk
id, so the order is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graphrag_orm.evidence import Route, RouteRank

RRF_K = 60


@dataclass(frozen=True)
class Candidate:
    """One route's hit: a chunk id and the route's native score."""

    chunk_id: str
    score: float


@dataclass(frozen=True)
class Fused:
    chunk_id: str
    score: float
    routes: tuple[RouteRank, ...]


def dedupe(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Keep each chunk id's first (best-ranked) hit."""
    seen: set[str] = set()
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.chunk_id not in seen:
            seen.add(candidate.chunk_id)
            kept.append(candidate)
    return kept


def fuse(lists: Mapping[Route, Sequence[Candidate]], k: int = RRF_K) -> list[Fused]:
    """Fuse ranked lists by RRF; highest fused score first, ties by chunk id."""
    scores: dict[str, float] = {}
    ranks: dict[str, list[RouteRank]] = {}
    for route in sorted(lists, key=lambda r: r.value):
        for position, candidate in enumerate(dedupe(lists[route]), start=1):
            share = 1.0 / (k + position)
            scores[candidate.chunk_id] = scores.get(candidate.chunk_id, 0.0) + share
            ranks.setdefault(candidate.chunk_id, []).append(
                RouteRank(route=route, rank=position, native_score=candidate.score, rank_score=share)
            )
    ordered = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
    return [Fused(chunk_id, scores[chunk_id], tuple(ranks[chunk_id])) for chunk_id in ordered]
