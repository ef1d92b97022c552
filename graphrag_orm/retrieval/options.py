"""Retrieval settings: routes, stages, candidate lists, the evidence budget, context and scope.

A leaf: it imports no route, stage or service.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from graphrag_orm.evidence import Route, RouteName
from graphrag_orm.retrieval.scope import Scope
from graphrag_orm.values import Options

__all__ = ["MAX_STAGES", "CypherExpansion", "GraphOptions", "RetrievalOptions", "Retrievers", "StageName"]

#: A post-fusion stage's name, as the retriever's stages are registered.
StageName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")]
#: Stages one retrieval may name, at most.
MAX_STAGES = 8


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
    """

    cypher: str = Field(min_length=1, max_length=20_000)
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_seconds: float = Field(5.0, ge=0.1, le=60.0)
    max_rows: int = Field(50, ge=1, le=1_000)
    trusted: bool = False


class RetrievalOptions(Options):
    """What to search and how much evidence to keep; every bound has a default and a maximum."""

    #: The routes to search, by name: the toolkit's (:class:`~graphrag_orm.evidence.Route`) or
    #: one the retriever was given.
    routes: frozenset[RouteName] = frozenset({Route.VECTOR, Route.FULL_TEXT})
    #: Post-fusion stages to apply, in order, by the names the retriever was given them under.
    stages: tuple[StageName, ...] = Field((), max_length=MAX_STAGES)
    candidates_per_route: int = Field(20, ge=1, le=256)
    max_items: int = Field(8, ge=1, le=128)
    max_utf8_bytes: int = Field(16_384, ge=64, le=65_536)
    neighbour_chunks: int = Field(1, ge=0, le=4)
    max_context_utf8_bytes: int = Field(16_384, ge=0, le=262_144)
    max_question_chars: int = Field(4_000, ge=1, le=100_000)
    expansion: CypherExpansion | None = None
    scope: Scope | None = None
    scope_exact_chunks: int = Field(10_000, ge=1, le=100_000)
    graph: GraphOptions = GraphOptions()

    def with_cypher_expansion(
        self, cypher: str, parameters: dict[str, Any] | None = None, *, trusted: bool = False
    ) -> RetrievalOptions:
        """A copy that runs ``cypher`` as a context expansion (validated); ``trusted`` lets it run in a scope."""
        expansion = CypherExpansion(cypher=cypher, parameters=dict(parameters or {}), trusted=trusted)
        return self.model_copy(update={"expansion": expansion})

    def with_scope(self, scope: Scope | None) -> RetrievalOptions:
        return self.model_copy(update={"scope": scope})


class Retrievers:
    """neo4j-graphrag's retriever names as presets; hybrid fuses ranks, not normalised scores."""

    @staticmethod
    def vector() -> RetrievalOptions:
        return RetrievalOptions(routes=frozenset({Route.VECTOR}))

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
