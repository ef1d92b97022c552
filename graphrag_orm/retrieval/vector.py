"""The vector route: the question's vector against the chunk vector index, or exactly inside a scope.

Unscoped, the index's ``route_candidates`` nearest chunks. Inside a scope of at
most ``scope_exact_chunks`` chunks, every chunk of the scope is scored with the
embedding set's similarity function on the server (exact); in a larger one, the index
is asked for about twice the limit inside the scope and filtered (over-fetch), and
``VectorScopeOverFetch`` is reported when that came back short. When the index declares
the chunk's document id (:attr:`ResolvedScope.in_index`) and a scope of whole documents
is too large to score exactly, the index filters by document before its top
``route_candidates`` (in-index: Neo4j 2026's ``SEARCH ... WHERE``) instead of
over-fetching. A scope small enough stays exact even then: the index's search is
approximate (a probe at 20,000 chunks gave exact's top 20 for 33 of 40 questions, see
docs/retrieve.md), and exact is the right answer there. The trace names
the strategy that ran. The query vector is always a parameter and embeddings are never
read back.
"""

from __future__ import annotations

from graphrag_orm.codes import LimitName
from graphrag_orm.embeddings import Embedder, EmbeddingSet, validate_vectors
from graphrag_orm.embeddings.base import embed_questions
from graphrag_orm.evidence import Route, ScopeStrategy
from graphrag_orm.retrieval.routes import RouteRequest, RouteSearch, over_fetch
from graphrag_orm.retrieval.statements import RetrievalStatements

__all__ = ["VectorRoute"]


class VectorRoute:
    """Plans the vector route's search for one question (embedding it first)."""

    name = Route.VECTOR
    follows = False

    def __init__(self, statements: RetrievalStatements, embedder: Embedder, embedding_set: EmbeddingSet) -> None:
        self.statements = statements
        self.embedder = embedder
        self.embedding_set = embedding_set

    @property
    def indexes(self) -> tuple[str, ...]:
        return (self.statements.vector_index,)

    async def plan(self, request: RouteRequest) -> RouteSearch:
        """The route's subquery; an invalid query vector raises ``EmbeddingRejected`` before any search."""
        question, options, scope = request.question, request.options, request.scope
        vectors = await embed_questions(self.embedder, [question])
        (vector,) = validate_vectors(vectors, 1, self.embedding_set)
        k = options.route_candidates
        st = self.statements
        if scope is None:
            return RouteSearch(Route.VECTOR, "vector", st.vector, {"vector": vector, "vectorFetch": k}, k=k)
        if scope.chunks <= options.scope_exact_chunks:
            return RouteSearch(
                Route.VECTOR,
                "vector",
                st.vector_exact,
                {"vector": vector, "k": k, **scope.parameters},
                strategy=ScopeStrategy.EXACT,
                asked=k,
                k=k,
            )
        if scope.in_index:
            return RouteSearch(
                Route.VECTOR,
                "vector",
                st.vector_in_index,
                {"vector": vector, "k": k, **scope.parameters},
                strategy=ScopeStrategy.IN_INDEX,
                asked=k,
                k=k,
            )
        fetch = over_fetch(k, scope)
        return RouteSearch(
            Route.VECTOR,
            "vector",
            st.vector_over_fetch,
            {"vector": vector, "vectorFetch": fetch, "k": k, **scope.parameters},
            strategy=ScopeStrategy.OVER_FETCH,
            asked=fetch,
            k=k,
            total_chunks=scope.total_chunks,
            short_limit=LimitName.VECTOR_SCOPE_OVER_FETCH,
        )
