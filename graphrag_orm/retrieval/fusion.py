"""Reciprocal rank fusion: ranks, never raw scores, are combined, in one place.

Each route's list is ranked from 1 in the order the route gives (score, then chunk
id); an item's fused score is the sum over routes of ``1 / (k + rank)`` with k = 60.
Items are keyed by chunk id; ties are broken by chunk id, so the order is
deterministic. Fusion runs on the server, inside the statement that then projects the
winners (:data:`FUSE`), so unscoped hybrid retrieval is one round trip; the graph
route's candidates join it as a parameter (:func:`ranked_hits`), the same fusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.evidence import RouteRank

__all__ = ["FUSE", "RRF_K", "Candidate", "dedupe", "hits_of", "ranked_hits", "route_ranks"]

RRF_K = 60


@dataclass(frozen=True)
class Candidate:
    """One route's hit: a chunk id and the route's native score."""

    chunk_id: str
    score: float


def dedupe(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Keep each chunk id's first (best-ranked) hit."""
    seen: set[str] = set()
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.chunk_id not in seen:
            seen.add(candidate.chunk_id)
            kept.append(candidate)
    return kept


def ranked_hits(route: str, candidates: Sequence[Candidate]) -> list[dict[str, Any]]:
    """A route's candidates as the hits :data:`FUSE` reads, ranked from 1 in their order."""
    return [
        {"id": candidate.chunk_id, "score": candidate.score, "route": str(route), "rank": rank}
        for rank, candidate in enumerate(dedupe(candidates), start=1)
    ]


def hits_of(column: str, route: str) -> str:
    """A Cypher expression ranking the ``[{id, score}]`` list ``column`` from 1 as hits of ``route``
    (both checked names: :func:`~graphrag_orm.retrieval.routes.check_search`)."""
    return (
        f"[i IN range(0, size({column}) - 1) | "
        f"{{id: {column}[i].id, score: {column}[i].score, route: '{route}', rank: i + 1}}]"
    )


#: Fuses ``hits`` (``{id, score, route, rank}`` maps) into ``total`` (chunks fused) and
#: ``top`` (at most ``$maxItems`` of ``{id, score, ranks}``, best first, ties by id),
#: always keeping the chunks in ``$reserved`` (ids that every ``top`` must hold).
FUSE = (
    "CALL (hits) { UNWIND hits AS hit "
    "WITH hit.id AS id, collect(hit {.route, .rank, .score}) AS ranks, sum(1.0 / ($rrf + hit.rank)) AS fused "
    "ORDER BY fused DESC, id "
    "WITH collect({id: id, score: fused, ranks: ranks}) AS ranked "
    "WITH ranked, [x IN ranked WHERE NOT x.id IN $reserved][..($maxItems - size($reserved))] AS others "
    "WITH ranked, [x IN others | x.id] AS kept "
    "RETURN size(ranked) AS total, [x IN ranked WHERE x.id IN $reserved OR x.id IN kept] AS top } "
)


def route_ranks(ranks: Sequence[Mapping[str, Any]], k: int = RRF_K) -> tuple[RouteRank, ...]:
    """One fused item's ``ranks`` as values, in route-name order."""
    return tuple(
        RouteRank(
            route=str(rank["route"]),
            rank=int(rank["rank"]),
            native_score=float(rank["score"]),
            rank_score=1.0 / (k + int(rank["rank"])),
        )
        for rank in sorted(ranks, key=lambda r: str(r["route"]))
    )
