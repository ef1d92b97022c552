"""Routes and stages: the two protocols a retrieval is assembled from.

A **route** (:class:`RetrievalRoute`) finds candidate chunks for a question. Its
:meth:`~RetrievalRoute.plan` returns one of two parts:

- a :class:`RouteSearch`: a subquery of the retrieval's one statement, returning the
  route's hits as ``[{id, score}]`` in its ``column``, best first, ties by chunk id (the
  vector and full-text routes; an index route of an application's own);
- a :class:`RouteRead`: candidates the route read for itself, with the context, limits
  and reserved places it brings (the graph route, which reads in its own transaction).

A route that ``follows`` is planned after the others, with their candidates in
:attr:`RouteRequest.earlier` (the graph route takes its anchors from them), and must
return a :class:`RouteRead`. The retriever fuses every route's candidates by rank in one
statement (:mod:`~graphrag_orm.retrieval.fusion`): the searches' hits and the reads' as a
parameter, deterministic (fused score, then chunk id).

A **stage** (:class:`RetrievalStage`) runs after fusion on the ranked items: it may
reorder them or leave some out, never add one; it asks for up to ``wants`` fused items
(at most :data:`MAX_STAGE_ITEMS`), the budget then keeps ``max_items``. A reranker or a
filter is a stage. A new route is one module with a class that meets the protocol (and,
for the toolkit's own, one :class:`~graphrag_orm.evidence.Route` member); an application
passes its own to :class:`~graphrag_orm.retrieval.Retriever` (``routes=``, ``stages=``)
and names them in :class:`~graphrag_orm.retrieval.RetrievalOptions`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import ContextItem, EvidenceItem, ScopeRoute, ScopeStrategy
from graphrag_orm.retrieval.fusion import Candidate
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.values import Limit

__all__ = [
    "MAX_OVER_FETCH",
    "MAX_STAGE_ITEMS",
    "RESERVED_COLUMNS",
    "RetrievalRoute",
    "RetrievalStage",
    "RouteOutcome",
    "RouteRead",
    "RouteRequest",
    "RouteSearch",
    "StageResult",
    "check_route",
    "check_search",
    "check_stage",
    "over_fetch",
]

MAX_OVER_FETCH = 10_000
#: Fused items a stage may ask for, at most.
MAX_STAGE_ITEMS = 256
#: Names the retrieval's statement uses for itself; no route's column may take one.
RESERVED_COLUMNS = frozenset(
    {"kept", "hits", "hit", "total", "items", "top", "ranked", "others", "id", "c", "d", "n", "fullTextFound"}
)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
_COLUMN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")


@dataclass(frozen=True)
class RouteRequest:
    """What a route plans from: the question, the options, the resolved scope and, for a route
    that follows, the other routes' candidates by route name (best first)."""

    question: str
    options: RetrievalOptions
    scope: ResolvedScope | None
    earlier: Mapping[str, tuple[Candidate, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class RouteOutcome:
    """One route's trace inside a scope, the limits it reached, and what it brings besides ranks.

    ``candidates`` (best first) are read back only where something else needs them (a
    route that follows); the one statement of hybrid retrieval returns how many each
    route kept, and the fused items carry every route's rank.
    """

    kept: int
    scope: ScopeRoute | None = None
    limits: tuple[Limit, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    context: tuple[ContextItem, ...] = ()


@dataclass(frozen=True)
class RouteSearch:
    """One route's search as a subquery; ``subquery`` is None when there is nothing to search."""

    route: str
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
    #: The statement also returns ``{column}Found``, how many the index returned before the
    #: exact filter (a tenanted graph's full-text search, filtered by tenant inside the index and
    #: exactly after it): short is reported only when the index filled its fetch and fewer than
    #: ``k`` survived, never because the tenant has fewer matches.
    counts_found: bool = False

    def outcome(self, hits: Sequence[Mapping[str, Any]], found: int | None = None) -> RouteOutcome:
        """The route's outcome from its hits (``{id, score}`` maps, in the statement's order)."""
        candidates = tuple(Candidate(hit["id"], float(hit["score"])) for hit in hits)
        return replace(self.counted(len(candidates), found), candidates=candidates)

    def counted(self, kept: int, found: int | None = None) -> RouteOutcome:
        """The route's outcome from the number of candidates it kept (and the index returned)."""
        short = self.subquery is not None and kept < self.k
        if self.counts_found:
            short = short and found is not None and found >= self.asked
        if self.strategy is None:
            if short and self.counts_found and self.short_limit:
                return RouteOutcome(kept, None, (Limit(name=self.short_limit, value=self.asked),))
            return RouteOutcome(kept)
        trace = ScopeRoute(route=self.route, strategy=self.strategy, asked=self.asked, kept=kept)
        short = short and (self.counts_found or self.asked < self.total_chunks)
        limit = (Limit(name=self.short_limit, value=self.asked),) if short and self.short_limit else ()
        return RouteOutcome(kept, trace, limit)


@dataclass(frozen=True)
class RouteRead:
    """Candidates a route read for itself, best first, and what it brings besides them."""

    route: str
    candidates: tuple[Candidate, ...]
    context: tuple[ContextItem, ...] = ()
    limits: tuple[Limit, ...] = ()
    #: Chunk ids that keep a place among the fused winners (at most ``max_items``).
    reserved: tuple[str, ...] = ()
    scope: ScopeRoute | None = None

    def outcome(self) -> RouteOutcome:
        return RouteOutcome(len(self.candidates), self.scope, self.limits, self.candidates, self.context)


@runtime_checkable
class RetrievalRoute(Protocol):
    """A route: its name (what options and ranks call it), whether it follows the others, its plan."""

    @property
    def name(self) -> str: ...

    @property
    def follows(self) -> bool: ...

    #: Index names the route searches, for the evidence's provenance.
    @property
    def indexes(self) -> tuple[str, ...]: ...

    async def plan(self, request: RouteRequest) -> RouteSearch | RouteRead: ...


@dataclass(frozen=True)
class StageResult:
    """A stage's items (a reordering of some of those it was given) and the limits it reached."""

    items: tuple[EvidenceItem, ...]
    limits: tuple[Limit, ...] = ()


@runtime_checkable
class RetrievalStage(Protocol):
    """A post-fusion stage: its name, how many fused items it wants, and what it does to them."""

    @property
    def name(self) -> str: ...

    def wants(self, options: RetrievalOptions) -> int:
        """Fused items to hand this stage (at least ``max_items`` is always read)."""
        ...

    async def apply(self, request: RouteRequest, items: tuple[EvidenceItem, ...]) -> StageResult: ...


def check_route(route: object) -> RetrievalRoute:
    """``route`` when it meets the protocol with a valid name; ``invalid-option`` otherwise."""
    if not isinstance(route, RetrievalRoute) or not _NAME.match(str(route.name)):
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, "a route needs a name (a letter, then letters, digits, _ or -) and plan()"
        )
    return route


def check_stage(stage: object) -> RetrievalStage:
    """``stage`` when it meets the protocol with a valid name; ``invalid-option`` otherwise."""
    if not isinstance(stage, RetrievalStage) or not _NAME.match(str(stage.name)):
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, "a stage needs a name (a letter, then letters, digits, _ or -) and apply()"
        )
    return stage


def check_search(search: RouteSearch) -> RouteSearch:
    """A search whose route name and column may be written into the statement."""
    if not _NAME.match(search.route) or not _COLUMN.match(search.column) or search.column in RESERVED_COLUMNS:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION,
            f"a route's column must be a plain name (letters, digits, _) other than {', '.join(sorted(RESERVED_COLUMNS))}",
        )
    return search


def over_fetch(k: int, scope: ResolvedScope) -> int:
    """How many candidates to ask an index for so about ``k`` survive the scope's filter.

    About twice the limit inside the scope, in expectation: the limit scaled by the
    share of the graph the scope holds; at least ``k``, at most :data:`MAX_OVER_FETCH`.
    """
    share = scope.chunks / scope.total_chunks if scope.total_chunks else 1.0
    wanted = math.ceil(2 * k / share) if share > 0 else MAX_OVER_FETCH
    return max(k, min(MAX_OVER_FETCH, wanted))
