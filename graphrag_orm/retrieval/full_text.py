"""The full-text route: the question's words against the chunk text index.

The question becomes a Lucene disjunction of its words, every syntax character escaped
(:func:`~graphrag_orm.retrieval.lucene.to_query`); a question with no words left
searches nothing. Unscoped, the index's ``route_candidates`` best chunks; inside a
scope, always over-fetch: about twice the limit inside the scope, filtered on the
server, with ``FullTextScopeOverFetch`` reported when that came back short. In a
tenanted graph (docs/tenancy.md) the index covers the chunk's tenant too, and the query
requires the tenant's phrase on that field (boosted 0: it filters, it does not score), so
the index returns the tenant's chunks and the statement checks each exactly. An id
sharing the tenant's words (``acme`` within ``acme-eu``, or ``Acme``) passes the index's
clause and is dropped by the exact check: when that leaves fewer than the limit of a
fetch the index filled, ``FullTextTenantOverFetch`` (or the scope's limit) is reported.
"""

from __future__ import annotations

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import Route, ScopeStrategy
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.routes import RouteRequest, RouteSearch, over_fetch
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
            return RouteSearch(
                Route.FULL_TEXT,
                "fullText",
                st.full_text,
                {**parameters, "fullTextFetch": k, "k": k},
                asked=k,
                k=k,
                short_limit=LimitName.FULL_TEXT_TENANT_OVER_FETCH,
                counts_found=True,
            )
        if scope is None:
            return RouteSearch(Route.FULL_TEXT, "fullText", st.full_text, {**parameters, "fullTextFetch": k}, k=k)
        # A tenanted scope's share is of the tenant's chunks, which the index's tenant clause searches.
        fetch = over_fetch(k, scope)
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
            counts_found=tenanted,
        )
