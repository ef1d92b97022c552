"""Retrieval settings: routes, stages, candidate lists, the evidence budget, context and scope.

A leaf: it imports no route, stage or service.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final

from pydantic import Field, StringConstraints

from graphrag_orm.evidence import Route, RouteName
from graphrag_orm.retrieval.scope import Scope
from graphrag_orm.tenancy import VouchedTenant
from graphrag_orm.values import DEFAULT_QUESTION_CHARS, Options

__all__ = [
    "ITEM_UTF8_BYTES",
    "MAX_CANDIDATES_PER_ROUTE",
    "MAX_EVIDENCE_UTF8_BYTES",
    "MAX_STAGES",
    "MIN_SIZED_CANDIDATES",
    "PASSAGE_STAGE",
    "CypherExpansion",
    "Fusion",
    "GraphOptions",
    "RetrievalOptions",
    "Retrievers",
    "StageName",
]

#: A post-fusion stage's name, as the retriever's stages are registered.
StageName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")]
#: Stages one retrieval may name, at most.
MAX_STAGES = 8
#: The passage stage's name (:mod:`~graphrag_orm.retrieval.passages`): every retriever has it.
PASSAGE_STAGE: Final = "passages"
#: Candidates a route reads, at most (``candidates_per_route``, or as sized from ``max_items``).
MAX_CANDIDATES_PER_ROUTE: Final = 256
#: Candidates a route reads when sized from ``max_items``, at least.
MIN_SIZED_CANDIDATES: Final = 20
#: The default evidence budget's bytes per item: a default chunk (2,048) and room for its title.
ITEM_UTF8_BYTES: Final = 2_560
#: The largest evidence budget: ``ITEM_UTF8_BYTES`` times the most items (128).
MAX_EVIDENCE_UTF8_BYTES: Final = 327_680


class Fusion(StrEnum):
    """How the routes' candidates become one ranking (:mod:`~graphrag_orm.retrieval.fusion`)."""

    #: Each hit votes ``1 / (60 + rank)``: ranks only.
    RECIPROCAL_RANK = "reciprocal-rank"
    #: Each hit votes its score over its route's best score; a chunk's votes add up.
    SCORE = "score"
    #: The same votes; a chunk keeps its best route's (neo4j-graphrag's hybrid fusion).
    BEST_SCORE = "best-score"
    #: Each hit votes its score's place in its route's range, ``(score - worst) / (best - worst)``
    #: over the route's candidates; a chunk keeps its best route's vote.
    RELATIVE_SCORE = "relative-score"


class GraphOptions(Options):
    """Bounds of the graph route; every one reached is reported in ``limits_reached``."""

    max_hops: int = Field(3, ge=1, le=5)
    max_degree: int = Field(50, ge=1, le=10_000)
    max_facts: int = Field(100, ge=1, le=1_000)
    max_anchors: int = Field(20, ge=1, le=200)
    anchor_chunks: int = Field(3, ge=0, le=20, description="top chunks per route whose things are anchors")
    chunks_per_fact: int = Field(2, ge=1, le=10)
    reserved_items: int = Field(12, ge=0, le=64, description="budget kept for the route's best candidates")


class CypherExpansion(Options):
    """A read-only Cypher query whose rows become labelled context (never citations).

    It runs in a read transaction with ``timeout_seconds``; at most ``max_rows`` rows are
    read (more is reported as ``ExpansionRows``). Parameters ``$chunkIds`` (the evidence
    items) and ``$scopeDocumentIds`` (the resolved scope, or null) are added to yours.

    In a scoped retrieval an expansion runs only when ``trusted``: the application vouches
    that its query reads nothing a caller of that scope may not see (the query can read
    the whole graph, and a row's text cannot be traced to where it came from). Untrusted,
    it is refused with ``expansion-not-trusted`` before anything is sent. Trusted, every
    row that names a chunk, document or section outside the scope (its id anywhere in the
    row) is still dropped, and counted as ``ExpansionOutOfScope``.

    In a tenanted graph an expansion runs only when the application vouches for it per
    tenant: ``vouched_tenant`` is the store's tenant, and the query filters by ``$tenant``.
    Unvouched it is ``tenant-refused``, vouched for another tenant ``tenant-mismatch``; its
    rows holding another tenant's node or key are dropped and counted as
    ``ExpansionOutsideTenant`` (:mod:`graphrag_orm.store.fence`). Untenanted, it is ignored.
    """

    cypher: str = Field(min_length=1, max_length=20_000)
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_seconds: float = Field(5.0, ge=0.1, le=60.0)
    max_rows: int = Field(50, ge=1, le=1_000)
    trusted: bool = False
    vouched_tenant: VouchedTenant = None


class RetrievalOptions(Options):
    """What to search and how much evidence to keep; every bound has a default and a maximum."""

    #: The routes to search, by name: the toolkit's (:class:`~graphrag_orm.evidence.Route`) or
    #: one the retriever was given.
    routes: frozenset[RouteName] = frozenset({Route.VECTOR, Route.FULL_TEXT})
    #: Post-fusion stages to apply, in order, by name: ``"passages"`` (every retriever's, the
    #: default) and those the retriever was given. ``()``: the fused order as it is.
    stages: tuple[StageName, ...] = Field((PASSAGE_STAGE,), max_length=MAX_STAGES)
    #: Candidates each route reads; None: sized from ``max_items`` (:attr:`route_candidates`).
    candidates_per_route: int | None = Field(None, ge=1, le=MAX_CANDIDATES_PER_ROUTE)
    candidates_per_item: int = Field(3, ge=1, le=32, description="candidates per route for each of max_items")
    fusion: Fusion = Fusion.RELATIVE_SCORE
    #: A hit also votes for the chunks next to it that hold some of its bytes (the chunker's overlap).
    shared_votes: bool = True
    max_items: int = Field(8, ge=1, le=128)
    #: The evidence text's UTF-8 bytes; None: room for ``max_items`` whole default chunks (:attr:`utf8_budget`).
    max_utf8_bytes: int | None = Field(None, ge=64, le=MAX_EVIDENCE_UTF8_BYTES)
    neighbour_chunks: int = Field(1, ge=0, le=4)
    max_context_utf8_bytes: int = Field(16_384, ge=0, le=262_144)
    max_question_chars: int = Field(DEFAULT_QUESTION_CHARS, ge=1, le=100_000)
    expansion: CypherExpansion | None = None
    scope: Scope | None = None
    scope_exact_chunks: int = Field(10_000, ge=1, le=100_000)
    graph: GraphOptions = GraphOptions()

    @property
    def route_candidates(self) -> int:
        """Candidates each route reads: ``candidates_per_route`` when set, else ``candidates_per_item``
        times ``max_items``, at least :data:`MIN_SIZED_CANDIDATES`, at most :data:`MAX_CANDIDATES_PER_ROUTE`
        (``CandidatesPerRoute`` is reported when that cut it: :attr:`candidates_capped`)."""
        if self.candidates_per_route is not None:
            return self.candidates_per_route
        return min(MAX_CANDIDATES_PER_ROUTE, max(MIN_SIZED_CANDIDATES, self.candidates_per_item * self.max_items))

    @property
    def candidates_capped(self) -> bool:
        """Whether the sized candidates were cut to :data:`MAX_CANDIDATES_PER_ROUTE`."""
        return (
            self.candidates_per_route is None and self.candidates_per_item * self.max_items > MAX_CANDIDATES_PER_ROUTE
        )

    @property
    def utf8_budget(self) -> int:
        """The evidence budget in UTF-8 bytes: ``max_utf8_bytes`` when set, else ``max_items`` times
        :data:`ITEM_UTF8_BYTES`, so the default holds ``max_items`` whole default chunks with their titles."""
        return self.max_utf8_bytes if self.max_utf8_bytes is not None else self.max_items * ITEM_UTF8_BYTES

    def with_cypher_expansion(
        self,
        cypher: str,
        parameters: dict[str, Any] | None = None,
        *,
        trusted: bool = False,
        vouched_tenant: str | None = None,
    ) -> RetrievalOptions:
        """A copy that runs ``cypher`` as a context expansion (validated); ``trusted`` lets it run in a
        scope, ``vouched_tenant`` in a tenanted graph (:class:`CypherExpansion`)."""
        expansion = CypherExpansion(
            cypher=cypher, parameters=dict(parameters or {}), trusted=trusted, vouched_tenant=vouched_tenant
        )
        return self.model_copy(update={"expansion": expansion})

    def with_scope(self, scope: Scope | None) -> RetrievalOptions:
        return self.model_copy(update={"scope": scope})


class Retrievers:
    """neo4j-graphrag's retriever names as presets. ``vector`` is the vector route alone in its
    own order (no stage); the hybrid ones are the defaults' fusion."""

    @staticmethod
    def vector() -> RetrievalOptions:
        return RetrievalOptions(routes=frozenset({Route.VECTOR}), stages=())

    @staticmethod
    def hybrid() -> RetrievalOptions:
        return RetrievalOptions(routes=frozenset({Route.VECTOR, Route.FULL_TEXT}))

    @staticmethod
    def hybrid_graph() -> RetrievalOptions:
        """Vector, full-text and the graph route (needs an ontology), with room for 24 items."""
        return RetrievalOptions(routes=frozenset({Route.VECTOR, Route.FULL_TEXT, Route.GRAPH}), max_items=24)

    @staticmethod
    def vector_cypher(cypher: str, parameters: dict[str, Any] | None = None) -> RetrievalOptions:
        return Retrievers.vector().with_cypher_expansion(cypher, parameters)

    @staticmethod
    def hybrid_cypher(cypher: str, parameters: dict[str, Any] | None = None) -> RetrievalOptions:
        return Retrievers.hybrid().with_cypher_expansion(cypher, parameters)
