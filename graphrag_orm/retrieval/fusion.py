"""Fusion: every route's ranked candidates become one ranking, in one place, on the server.

Each route's list is ranked from 1 in the order the route gives (score, then chunk id).
Each hit casts one vote for its chunk, by the options' :class:`~graphrag_orm.retrieval.options.Fusion`:

- ``reciprocal-rank``: ``1 / (k + rank)`` with k = 60 (ranks only, never raw scores);
- ``score``: the hit's score divided by its route's best score, so each route's best
  hit votes 1, and a chunk's votes from several routes add up;
- ``best-score``: the same normalised votes, but a chunk keeps only its best route's
  vote (neo4j-graphrag's ``HybridRetriever``: what one route is sure of is never
  outvoted by chunks that two routes found lukewarm);
- ``relative-score``: the hit's place in its route's range of scores, ``(score - worst)
  / (best - worst)`` over the route's candidates (1 when they all score alike), and a
  chunk keeps its best route's vote. A route whose scores lie in a narrow band (the
  vector index's cosine as ``(1 + cos) / 2``: every candidate of a small model's list
  within a few hundredths of the first) no longer outvotes, with its whole list, all
  but the first few hits of a route whose scores fall fast (full text's BM25).

With shared votes (``RetrievalOptions.shared_votes``), a hit also votes for the chunks
next to it (one ``NEXT`` step either way) whose bytes overlap its own, with the share of
its bytes they hold: the chunker's overlap repeats a paragraph in two chunks, and a
passage there is one passage, whichever of the two a route ranked. A chunk takes each
route's largest vote (its own hit's or a shared one), and its fused score is the sum
over routes (``best-score``: the largest). Only chunks some route hit are fused; sharing moves votes between them.

Ties are broken by chunk id, so the order is deterministic. Fusion runs inside the
statement that then projects the winners (:func:`fuse_clause`), so unscoped hybrid
retrieval is one round trip; the graph route's candidates join it as a parameter
(:func:`ranked_hits`), the same fusion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.evidence import RouteRank
from graphrag_orm.store.names import StoredNames

__all__ = [
    "BEST_SCORE_FUSION",
    "RELATIVE_SCORE_FUSION",
    "RRF_K",
    "SCORE_FUSION",
    "Candidate",
    "dedupe",
    "fuse_clause",
    "hits_of",
    "ranked_hits",
    "route_ranks",
]

RRF_K = 60
#: The ``$fusion`` parameter's value for score-normalised fusion (any other: reciprocal rank).
SCORE_FUSION = "score"
#: The ``$fusion`` parameter's value for score-normalised fusion that keeps a chunk's best route's vote.
BEST_SCORE_FUSION = "best-score"
#: The ``$fusion`` parameter's value for fusion of scores placed in their route's range, best route's vote.
RELATIVE_SCORE_FUSION = "relative-score"
#: Fusions whose votes are scores over the route's best (any other: reciprocal rank, or relative).
NORMALISED = (SCORE_FUSION, BEST_SCORE_FUSION)
#: Fusions where a chunk keeps its best route's vote (any other: the votes add up).
BEST_OF_ROUTES = (BEST_SCORE_FUSION, RELATIVE_SCORE_FUSION)


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
    """A route's candidates as the hits the fusion reads, ranked from 1 in their order, each score
    also over the route's first (``norm``, 0 when that is not positive) and placed in the route's
    range (``rel``, 1 when the first and the last score alike)."""
    kept = dedupe(candidates)
    top = kept[0].score if kept else 0.0
    low = kept[-1].score if kept else 0.0
    return [
        {
            "id": candidate.chunk_id,
            "score": candidate.score,
            "norm": candidate.score / top if top > 0 else 0.0,
            "rel": (candidate.score - low) / (top - low) if top > low else 1.0,
            "route": str(route),
            "rank": rank,
        }
        for rank, candidate in enumerate(kept, start=1)
    ]


def hits_of(column: str, route: str) -> str:
    """A Cypher expression ranking the ``[{id, score}]`` list ``column`` (best first) from 1 as hits
    of ``route``, as :func:`ranked_hits` does (both checked names:
    :func:`~graphrag_orm.retrieval.routes.check_search`)."""
    norm = f"CASE WHEN {column}[0].score > 0 THEN {column}[i].score / {column}[0].score ELSE 0.0 END"
    last = f"{column}[size({column}) - 1].score"
    rel = (
        f"CASE WHEN {column}[0].score > {last} "
        f"THEN ({column}[i].score - {last}) / ({column}[0].score - {last}) ELSE 1.0 END"
    )
    return (
        f"[i IN range(0, size({column}) - 1) | "
        f"{{id: {column}[i].id, score: {column}[i].score, norm: {norm}, rel: {rel}, route: '{route}', rank: i + 1}}]"
    )


def fuse_clause(names: StoredNames) -> str:
    """A subquery fusing ``hits`` (``{id, score, norm, route, rank}`` maps) into ``total`` (chunks
    fused) and ``top`` (at most ``$maxItems`` of ``{id, score, ranks}``, best first, ties by id),
    always keeping the chunks in ``$reserved``. Parameters: ``$fusion``, ``$rrf``, ``$sharedVotes``
    (and ``$tenant`` in a tenanted layout: a shared vote never reaches another tenant's chunk)."""
    ch = names.chunk
    start, end = ch.stored("start_byte"), ch.stored("end_byte")
    step = f"[:{names.next_chunk.relationship_type}]"
    shared = (
        f"MATCH (h:{ch.label} {{{ch.key}: hit.id{names.owned}}})-{step}-(o:{ch.label}) "
        f"WHERE $sharedVotes AND h.{end} > h.{start} AND o.{start} < h.{end} AND o.{end} > h.{start}"
        f"{names.tenant_and('o')} "
        f"RETURN o.{ch.key} AS id, vote * toFloat(CASE WHEN o.{end} < h.{end} THEN o.{end} ELSE h.{end} END "
        f"- CASE WHEN o.{start} > h.{start} THEN o.{start} ELSE h.{start} END) / (h.{end} - h.{start}) AS share, "
        "null AS own"
    )
    return (
        "CALL (hits) { UNWIND hits AS hit "
        f"WITH hit, CASE WHEN $fusion = '{RELATIVE_SCORE_FUSION}' THEN hit.rel "
        f"WHEN $fusion IN {list(NORMALISED)!r} THEN hit.norm ELSE 1.0 / ($rrf + hit.rank) END AS vote "
        "CALL (hit, vote) { RETURN hit.id AS id, vote AS share, hit {.route, .rank, .score, .norm, .rel} AS own "
        f"UNION ALL {shared} }} "
        "WITH id, hit.route AS route, max(share) AS share, collect(own) AS own "
        f"WITH id, CASE WHEN $fusion IN {list(BEST_OF_ROUTES)!r} THEN max(share) ELSE sum(share) END AS fused, "
        "reduce(acc = [], r IN collect(own) | acc + r) AS ranks WHERE size(ranks) > 0 "
        "ORDER BY fused DESC, id "
        "WITH collect({id: id, score: fused, ranks: ranks}) AS ranked "
        "WITH ranked, [x IN ranked WHERE NOT x.id IN $reserved][..($maxItems - size($reserved))] AS others "
        "WITH ranked, [x IN others | x.id] AS kept "
        "RETURN size(ranked) AS total, [x IN ranked WHERE x.id IN $reserved OR x.id IN kept] AS top } "
    )


def route_ranks(ranks: Sequence[Mapping[str, Any]], fusion: str, k: int = RRF_K) -> tuple[RouteRank, ...]:
    """One fused item's ``ranks`` as values, in route-name order; ``rank_score`` is the route's own
    vote (before any shared one) under ``fusion``."""
    return tuple(
        RouteRank(
            route=str(rank["route"]),
            rank=int(rank["rank"]),
            native_score=float(rank["score"]),
            rank_score=_vote(rank, fusion, k),
        )
        for rank in sorted(ranks, key=lambda r: str(r["route"]))
    )


def _vote(rank: Mapping[str, Any], fusion: str, k: int) -> float:
    """A route's own vote for a fused item under ``fusion`` (as :func:`fuse_clause` casts it)."""
    if fusion == RELATIVE_SCORE_FUSION:
        return float(rank.get("rel") or 0.0)
    if fusion in NORMALISED:
        return float(rank.get("norm") or 0.0)
    return 1.0 / (k + int(rank["rank"]))
