"""What an index route's search is, and what it returns: candidates, a scope trace, a limit.

The vector and full-text routes (:mod:`~graphrag_orm.retrieval.vector`,
:mod:`~graphrag_orm.retrieval.full_text`) each plan a :class:`RouteSearch`: a subquery
of the retrieval's statement, returning the route's hits as ``[{id, score}]``, best
first, ties by chunk id. :meth:`RouteSearch.outcome` reads those hits back as the
route's :class:`RouteOutcome` (or :meth:`RouteSearch.counted`, from how many it kept).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import Route, ScopeRoute, ScopeStrategy
from graphrag_orm.retrieval.fusion import Candidate
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.values import Limit

__all__ = ["MAX_OVER_FETCH", "RouteOutcome", "RouteSearch", "over_fetch"]

MAX_OVER_FETCH = 10_000


@dataclass(frozen=True)
class RouteOutcome:
    """One route's trace inside a scope, the limit it reached and, when read back, its candidates.

    ``candidates`` (best first) are read back only where something else needs them (the
    graph route's anchors); the one statement of hybrid retrieval returns how many each
    route kept, and the fused items carry every route's rank.
    """

    kept: int
    scope: ScopeRoute | None = None
    limit: Limit | None = None
    candidates: tuple[Candidate, ...] = ()


@dataclass(frozen=True)
class RouteSearch:
    """One route's search as a subquery; ``subquery`` is None when there is nothing to search."""

    route: Route
    #: The statement's column holding this route's hits.
    column: str
    subquery: str | None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    #: None when unscoped; otherwise how the route searches inside the scope.
    strategy: ScopeStrategy | None = None
    #: Candidates asked of the index (or of exact scoring) inside a scope.
    asked: int = 0
    #: Candidates the route keeps.
    k: int = 0
    #: Chunks in the graph (over-fetch only): asking for all of them can't come back short.
    total_chunks: int = 0
    #: Reported when an over-fetch came back short.
    short_limit: LimitName | None = None

    def outcome(self, hits: Sequence[Mapping[str, Any]]) -> RouteOutcome:
        """The route's outcome from its hits (``{id, score}`` maps, in the statement's order)."""
        candidates = tuple(Candidate(hit["id"], float(hit["score"])) for hit in hits)
        return replace(self.counted(len(candidates)), candidates=candidates)

    def counted(self, kept: int) -> RouteOutcome:
        """The route's outcome from the number of candidates it kept."""
        if self.strategy is None:
            return RouteOutcome(kept)
        trace = ScopeRoute(route=self.route, strategy=self.strategy, asked=self.asked, kept=kept)
        short = self.subquery is not None and kept < self.k and self.asked < self.total_chunks
        limit = Limit(name=self.short_limit, value=self.asked) if short and self.short_limit else None
        return RouteOutcome(kept, trace, limit)


def over_fetch(k: int, scope: ResolvedScope) -> int:
    """How many candidates to ask an index for so about ``k`` survive the scope's filter.

    About twice the limit inside the scope, in expectation: the limit scaled by the
    share of the graph the scope holds; at least ``k``, at most :data:`MAX_OVER_FETCH`.
    """
    share = scope.chunks / scope.total_chunks if scope.total_chunks else 1.0
    wanted = math.ceil(2 * k / share) if share > 0 else MAX_OVER_FETCH
    return max(k, min(MAX_OVER_FETCH, wanted))
