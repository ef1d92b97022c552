"""The retriever: one question in, ranked and budgeted evidence out.

``retrieve`` checks the question, resolves the scope, and sends one statement: the
routes' searches (:mod:`~graphrag_orm.retrieval.vector`,
:mod:`~graphrag_orm.retrieval.full_text`), rank fusion
(:mod:`~graphrag_orm.retrieval.fusion`) and the fields of the items that can enter the
budget, with their neighbours. With the graph route, whose anchors are the other
routes' best chunks, the searches and the fusion are two statements around it. Then
the budget, the context and the provenance. Embeddings are never read back. A failed
or cancelled route fails the whole retrieval: it never quietly falls back to the
routes that worked. A database error anywhere (a lost connection, a server restarted
under the driver) is ``retrieval-failed``, never the driver's own exception; the
store's reads are retried first, so the call after a restart finds a fresh connection.
Caller-supplied Cypher (a scope, an expansion) runs in one sandbox
(:class:`~graphrag_orm.store.sandbox.CypherSandbox`).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.errors import QuestionRefused, RetrievalFailed
from graphrag_orm.evidence import (
    ContextItem,
    Evidence,
    EvidenceItem,
    Grounding,
    PageStart,
    Provenance,
    Route,
    ScopeRoute,
    ScopeStrategy,
    ScopeTrace,
)
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.budget import apply_budget
from graphrag_orm.retrieval.context import bounded, neighbours
from graphrag_orm.retrieval.expansion import expand
from graphrag_orm.retrieval.full_text import FullTextRoute
from graphrag_orm.retrieval.fusion import RRF_K, Candidate, ranked_hits, route_ranks
from graphrag_orm.retrieval.graph import GraphRoute
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.retrieval.routes import RouteOutcome, RouteSearch
from graphrag_orm.retrieval.scope import ResolvedScope, ScopeResolver
from graphrag_orm.retrieval.statements import RetrievalStatements
from graphrag_orm.retrieval.vector import VectorRoute
from graphrag_orm.store import Store
from graphrag_orm.store.connection import server_version
from graphrag_orm.store.sandbox import CypherSandbox, vector_property_names
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = ["Retriever"]

#: What a failing route or read raises; anything else (a cancellation, a bug) propagates as it is.
_ROUTE_ERRORS = (Neo4jError, DriverError, OSError)


@dataclass(frozen=True)
class _Found:
    """What the statements found: each route's outcome, the fused winners and graph context."""

    outcomes: tuple[RouteOutcome, ...]
    #: Chunks fused in all (the winners are the first of them).
    total: int
    #: The winners, best first: ``{chunk, document, score, ranks, neighbours}``.
    items: list[dict[str, Any]]
    facts: tuple[ContextItem, ...] = ()
    graph_limits: tuple[Limit, ...] = ()


class Retriever:
    """Retrieves evidence from one layout's graph with one embedding set; reads only."""

    def __init__(
        self,
        store: Store,
        model: LexicalModel,
        embedding_set: EmbeddingSet,
        embedder: Embedder,
        options: RetrievalOptions | None = None,
        ontology: Ontology | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.embedding_set = embedding_set
        self.embedder = embedder
        self.options = options or RetrievalOptions()
        layout = model.layout
        self.vector_index = layout.vector_index_name(embedding_set.vector_index_name)
        self.fulltext_index = layout.fulltext_index_name()
        self.statements = RetrievalStatements.of(
            model, self.vector_index, self.fulltext_index, embedding_set.similarity.value
        )
        #: The one sandbox of caller-supplied Cypher: the scope's and the expansion's. It
        #: refuses the layout's vector property, the default staging one and, read from the
        #: database at each run, every vector index's (a staged re-embedding's included).
        self.sandbox = CypherSandbox(left_out=vector_property_names(layout))
        self.scopes = ScopeResolver(store, self.statements, self.sandbox)
        self.vector = VectorRoute(self.statements, embedder, embedding_set)
        self.full_text = FullTextRoute(self.statements)
        self.graph = GraphRoute(store, model, ontology) if ontology is not None else None
        self._server_version: str | None = None

    async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Evidence:
        """Evidence for one standalone question (answers rewrite a follow-up before calling this).

        Raises ``QuestionRefused`` (``empty-question``, ``question-too-long``,
        ``invalid-question``, ``route-not-available`` for the graph route without an
        ontology) before any read, ``ScopeError`` when a Cypher scope is refused (the
        sandbox's codes: ``not-allowed``, ``invalid-query``, ``not-read-only``, ``query-failed``,
        ``query-timeout``, ``too-deep``, ``regex-not-allowed``, ``range-too-large``, ``vector-not-readable``)
        or is not a scope (``invalid-scope``), ``EmbeddingRejected`` for an invalid query
        vector, and ``RetrievalFailed`` when a read, a route or the fusion fails
        (``retrieval-failed``) or the sandbox refuses the expansion (its code); never
        partial evidence.
        """
        options = options or self.options
        check_question(question, options.max_question_chars)
        if Route.GRAPH in options.routes and self.graph is None:
            raise QuestionRefused(ErrorCode.ROUTE_NOT_AVAILABLE, "the graph route needs an ontology")
        with span(SpanName.RETRIEVE, routes=sorted(r.value for r in options.routes)) as traced:
            scope: ResolvedScope | None = None
            try:
                if options.scope is not None:
                    scope = await self.scopes.resolve(options.scope)
                    traced.set("scope", scope.kind)
                    traced.set("scope_chunks", scope.chunks)
                evidence = await self._retrieve(question, options, scope)
            except _ROUTE_ERRORS as error:
                raise RetrievalFailed(
                    ErrorCode.RETRIEVAL_FAILED, f"a database read failed: {type(error).__name__}"
                ) from error
            traced.set("items", len(evidence.items))
            traced.set("context_items", len(evidence.context))
            traced.set("omitted_items", evidence.omitted_items)
            traced.set("utf8_bytes", evidence.utf8_bytes)
            traced.set("limits", [limit.name for limit in evidence.limits_reached])
            return evidence

    async def _retrieve(self, question: str, options: RetrievalOptions, scope: ResolvedScope | None) -> Evidence:
        provenance = await self._provenance(options)
        if scope is not None and scope.empty:
            return _nothing_in(scope, question, options, provenance)
        searches = await self._searches(question, options, scope)
        try:
            if Route.GRAPH in options.routes:
                found = await self._search_graph_and_fuse(question, searches, options, scope)
            else:
                found = await self._search_and_fuse(searches, options)
        except _ROUTE_ERRORS as error:
            raise RetrievalFailed(ErrorCode.RETRIEVAL_FAILED, f"a route failed: {type(error).__name__}") from error
        return await self._evidence(question, options, scope, found, provenance)

    async def _searches(
        self, question: str, options: RetrievalOptions, scope: ResolvedScope | None
    ) -> tuple[RouteSearch, ...]:
        """The index routes' searches, in route-name order (full text, then vector)."""
        searches: list[RouteSearch] = []
        if Route.FULL_TEXT in options.routes:
            searches.append(self.full_text.search(question, options, scope))
        if Route.VECTOR in options.routes:
            searches.append(await self.vector.search(question, options, scope))
        return tuple(searches)

    def _statement_parts(self, searches: Sequence[RouteSearch]) -> tuple[str | None, str | None, dict[str, Any]]:
        by_column = {search.column: search for search in searches}
        parameters: dict[str, Any] = {}
        for search in searches:
            parameters.update(search.parameters)
        vector, full_text = by_column.get("vector"), by_column.get("fullText")
        return (vector.subquery if vector else None), (full_text.subquery if full_text else None), parameters

    async def _search_and_fuse(self, searches: Sequence[RouteSearch], options: RetrievalOptions) -> _Found:
        """The index routes, fusion and the winners' projection: one statement."""
        vector, full_text, parameters = self._statement_parts(searches)
        result = await self.store.read(
            self.statements.evidence(vector, full_text, options.neighbour_chunks),
            {**parameters, "rrf": RRF_K, "maxItems": options.max_items, "reserved": []},
            name="retrieval.evidence",
        )
        row = result.single() or {}
        outcomes = tuple(search.counted(int(row.get(search.column) or 0)) for search in searches)
        return _Found(outcomes, int(row.get("total") or 0), list(row.get("items") or []))

    async def _search_graph_and_fuse(
        self, question: str, searches: Sequence[RouteSearch], options: RetrievalOptions, scope: ResolvedScope | None
    ) -> _Found:
        """The index routes, then the graph route from their best chunks, then fusion of all three."""
        assert self.graph is not None  # retrieve() refuses the graph route without an ontology
        vector, full_text, parameters = self._statement_parts(searches)
        row: Mapping[str, Any] = {}
        if vector or full_text:
            result = await self.store.read(
                self.statements.search(vector, full_text), parameters, name="retrieval.search"
            )
            row = result.single() or {}
        outcomes = tuple(search.outcome(row.get(search.column) or []) for search in searches)
        lists = {search.route: outcome.candidates for search, outcome in zip(searches, outcomes, strict=True)}
        # Anchors also come from the other routes' chunks, best first, alternating.
        top = options.graph.anchor_chunks
        anchors = [
            c.chunk_id
            for pair in zip_longest(lists.get(Route.VECTOR, ())[:top], lists.get(Route.FULL_TEXT, ())[:top])
            for c in pair
            if c is not None
        ]
        graph = await self.graph.run(question, list(dict.fromkeys(anchors)), options.graph, scope)
        found: list[Candidate] = graph.candidates[: options.candidates_per_route]
        hits = [hit for route, candidates in lists.items() for hit in ranked_hits(route, candidates)]
        hits += ranked_hits(Route.GRAPH, found)
        # Rank fusion favours chunks several routes found; a chunk that only grounds a
        # fact (a link in a chain the question does not resemble) would never make the
        # budget, so the graph route's best keep up to `reserved_items` places.
        reserved = [c.chunk_id for c in found[: min(options.graph.reserved_items, options.max_items)]]
        result = await self.store.read(
            self.statements.fuse(options.neighbour_chunks),
            {"hits": hits, "rrf": RRF_K, "maxItems": options.max_items, "reserved": reserved},
            name="retrieval.fuse",
        )
        fused = result.single() or {}
        return _Found(
            outcomes,
            int(fused.get("total") or 0),
            list(fused.get("items") or []),
            tuple(graph.context),
            tuple(graph.limits),
        )

    async def _evidence(
        self,
        question: str,
        options: RetrievalOptions,
        scope: ResolvedScope | None,
        found: _Found,
        provenance: Provenance,
    ) -> Evidence:
        """Items in rank order through the budget, then context, limits and the scope trace."""
        limits: list[Limit] = list(scope.limits) if scope else []
        limits += [outcome.limit for outcome in found.outcomes if outcome.limit]
        limits += found.graph_limits
        ranked, neighbours_of = _ranked(found.items, scope)
        budget = apply_budget(ranked, options.max_items, options.max_utf8_bytes)
        limits += budget.limits
        omitted = budget.omitted + (found.total - len(found.items))
        if found.total > len(found.items) and not any(lim.name == LimitName.MAX_ITEMS for lim in limits):
            limits.append(Limit(name=LimitName.MAX_ITEMS, value=options.max_items))
        context: list[ContextItem] = []
        if budget.items and options.neighbour_chunks:
            context += neighbours(budget.items, neighbours_of, scope)
        if options.expansion is not None:
            rows, expansion_limits = await expand(self.store, options.expansion, budget.items, scope, self.sandbox)
            context += rows
            limits += expansion_limits
        context, context_limits = bounded(context, options.max_context_utf8_bytes)
        limits += context_limits
        trace = None
        if scope is not None:
            routes = tuple(outcome.scope for outcome in found.outcomes if outcome.scope)
            trace = ScopeTrace(kind=scope.kind, documents=len(scope.ranges), chunks=scope.chunks, routes=routes)
        return Evidence(
            question=question,
            items=budget.items,
            context=(*found.facts, *context),
            utf8_bytes=budget.utf8_bytes,
            omitted_items=omitted,
            limits_reached=tuple(limits),
            provenance=provenance,
            scope=trace,
        )

    async def _provenance(self, options: RetrievalOptions) -> Provenance:
        if self._server_version is None:
            self._server_version = await server_version(self.store)
        indexes = []
        if Route.VECTOR in options.routes:
            indexes.append(self.vector_index)
        if Route.FULL_TEXT in options.routes:
            indexes.append(self.fulltext_index)
        return Provenance(
            server_version=self._server_version,
            embedding_set_id=self.embedding_set.id,
            indexes=tuple(indexes),
            similarity=self.embedding_set.similarity.value if Route.VECTOR in options.routes else None,
        )


def _nothing_in(scope: ResolvedScope, question: str, options: RetrievalOptions, provenance: Provenance) -> Evidence:
    """The evidence of an empty scope: nothing searched, every route traced as empty."""
    trace = ScopeTrace(
        kind=scope.kind,
        documents=len(scope.ranges),
        chunks=scope.chunks,
        routes=tuple(
            ScopeRoute(route=r, strategy=ScopeStrategy.EMPTY, asked=0, kept=0) for r in sorted(options.routes)
        ),
    )
    return Evidence(question=question, items=(), limits_reached=tuple(scope.limits), provenance=provenance, scope=trace)


def _ranked(
    entries: Sequence[Mapping[str, Any]], scope: ResolvedScope | None
) -> tuple[list[EvidenceItem], dict[str, list[dict[str, Any]]]]:
    """The fused winners as evidence items, in rank order, and each one's neighbours by chunk id."""
    ranked: list[EvidenceItem] = []
    neighbours_of: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        chunk = entry["chunk"]
        # Re-checked against the scope here too: defence in depth for every item.
        if scope is not None and not scope.contains(chunk["documentId"], chunk["startByte"], chunk["endByte"]):
            continue
        ranked.append(_item(chunk, entry["document"] or {}, float(entry["score"]), entry["ranks"]))
        neighbours_of[chunk["id"]] = entry["neighbours"]
    return ranked, neighbours_of


def _pages(page_starts: Sequence[int] | None, start: int, end: int) -> tuple[PageStart, ...] | None:
    if not page_starts:
        return None
    first = max(bisect.bisect_right(page_starts, start), 1)
    last = max(bisect.bisect_right(page_starts, max(end - 1, start)), first)
    return tuple(PageStart(page=p, start_byte=int(page_starts[p - 1])) for p in range(first, last + 1))


def _item(
    chunk: Mapping[str, Any], document: Mapping[str, Any], score: float, ranks: Sequence[Mapping[str, Any]]
) -> EvidenceItem:
    start, end = int(chunk["startByte"]), int(chunk["endByte"])
    return EvidenceItem(
        chunk_id=chunk["id"],
        document_id=chunk["documentId"],
        source_uri=document.get("sourceUri") or "",
        title=document.get("title"),
        text=chunk["text"],
        start_byte=start,
        end_byte=end,
        score=score,
        routes=route_ranks(ranks),
        pages=_pages(document.get("pageStarts"), start, end),
        grounding=Grounding.stored(chunk.get("grounding")),
        text_origin=document.get("textOrigin"),
    )
