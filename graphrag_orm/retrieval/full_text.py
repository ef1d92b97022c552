"""The full-text route: the question's words against the chunk text index.

The question becomes a Lucene disjunction of its words, every syntax character escaped
(:func:`~graphrag_orm.retrieval.lucene.to_query`); a question with no words left
searches nothing. Unscoped, the index's ``route_candidates`` best chunks; inside a
scope, always over-fetch: about twice the limit inside the scope, filtered on the
server, with ``FullTextScopeOverFetch`` reported when that came back short. In a
tenanted graph (docs/tenancy.md) the index cannot filter by tenant, so it is asked for
:data:`~graphrag_orm.retrieval.routes.DEFAULT_TENANT_OVER_FETCH` times as many (at most
``MAX_OVER_FETCH``) and the tenant's chunks are kept in the same statement; fewer than
the limit kept is reported (``FullTextTenantOverFetch``, or the scope's limit).
"""

from __future__ import annotations

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import Route, ScopeStrategy
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.routes import RouteRequest, RouteSearch, over_fetch, tenant_over_fetch
from graphrag_orm.retrieval.statements import RetrievalStatements

__all__ = ["FullTextRoute"]


class FullTextRoute:
    """Plans the full-text route's search for one question."""

    name = Route.FULL_TEXT
    follows = False

    def __init__(self, statements: RetrievalStatements) -> None:
        self.statements = statements

    @property
    def indexes(self) -> tuple[str, ...]:
        return (self.statements.fulltext_index,)

    async def plan(self, request: RouteRequest) -> RouteSearch:
        question, options, scope = request.question, request.options, request.scope
        query = to_query(question)
        k = options.route_candidates
        st = self.statements
        strategy = ScopeStrategy.OVER_FETCH if scope is not None else None
        if not query:
            return RouteSearch(Route.FULL_TEXT, "fullText", None, strategy=strategy, k=k)
        parameters = {"fullTextIndex": st.fulltext_index, "query": query}
        tenanted = st.names.tenanted
        if scope is None and tenanted:
            fetch = tenant_over_fetch(k)
            return RouteSearch(
                Route.FULL_TEXT,
                "fullText",
                st.full_text,
                {**parameters, "fullTextFetch": fetch, "k": k},
                asked=fetch,
                k=k,
                short_limit=LimitName.FULL_TEXT_TENANT_OVER_FETCH,
                tenant_filtered=True,
            )
        if scope is None:
            return RouteSearch(Route.FULL_TEXT, "fullText", st.full_text, {**parameters, "fullTextFetch": k}, k=k)
        fetch = tenant_over_fetch(over_fetch(k, scope)) if tenanted else over_fetch(k, scope)
        return RouteSearch(
            Route.FULL_TEXT,
            "fullText",
            st.full_text_over_fetch,
            {**parameters, "fullTextFetch": fetch, "k": k, **scope.parameters},
            strategy=strategy,
            asked=fetch,
            k=k,
            total_chunks=scope.total_chunks,
            short_limit=LimitName.FULL_TEXT_SCOPE_OVER_FETCH,
            tenant_filtered=tenanted,
        )
