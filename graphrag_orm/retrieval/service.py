"""The retriever: one question in, ranked and budgeted evidence out.

``retrieve`` checks the question, resolves the scope, plans each route the options name
(:mod:`~graphrag_orm.retrieval.routes`: the vector and full-text searches, the graph
route, an application's own) and sends one statement: the routes' searches, rank fusion
(:mod:`~graphrag_orm.retrieval.fusion`) and the fields of the items that can enter the
budget, with their neighbours. With a route that follows the others (the graph route,
whose anchors are their best chunks), the searches and the fusion are two statements
around it. Then the stages the options name, the budget, the context and the provenance. Embeddings are never read back. A failed
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
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.errors import ConfigurationError, QuestionRefused, RetrievalFailed
from graphrag_orm.evidence import (
    ContextItem,
    Evidence,
    EvidenceItem,
    Grounding,
    PageStart,
    Provenance,
    Route,
    RouteRank,
    ScopeRoute,
    ScopeStrategy,
    ScopeTrace,
)
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.budget import apply_budget
from graphrag_orm.retrieval.context import bounded, neighbours
from graphrag_orm.retrieval.expansion import expand, untrusted_expansion
from graphrag_orm.retrieval.full_text import FullTextRoute
from graphrag_orm.retrieval.fusion import RRF_K, ranked_hits, route_ranks
from graphrag_orm.retrieval.graph import GraphRoute
from graphrag_orm.retrieval.options import PASSAGE_STAGE, RetrievalOptions
from graphrag_orm.retrieval.passages import PassageStage
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.retrieval.routes import (
    MAX_STAGE_ITEMS,
    RetrievalRoute,
    RetrievalStage,
    RouteOutcome,
    RouteRead,
    RouteRequest,
    RouteSearch,
    check_route,
    check_search,
    check_stage,
)
from graphrag_orm.retrieval.scope import ResolvedScope, Scope, ScopeResolver
from graphrag_orm.retrieval.statements import FOUND_SUFFIX, RetrievalStatements
from graphrag_orm.retrieval.vector import VectorRoute
from graphrag_orm.store import Store
from graphrag_orm.store.connection import server_version
from graphrag_orm.store.fence import fence_for
from graphrag_orm.store.sandbox import CypherSandbox, vector_property_names
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = ["Retriever"]

#: What a failing route or read raises; anything else (a cancellation, a bug) propagates as it is.
_ROUTE_ERRORS = (Neo4jError, DriverError, OSError)


@dataclass(frozen=True)
class _Found:
    """What the statements found: each route's outcome and the fused winners."""

    outcomes: tuple[RouteOutcome, ...]
    #: Chunks fused in all (the winners are the first of them).
    total: int
    #: The winners, best first: ``{chunk, document, score, ranks, neighbours}``.
    items: list[dict[str, Any]]


#: The order routes are planned and traced in: the toolkit's index routes, then the rest by name.
_FIRST = (Route.VECTOR, Route.FULL_TEXT)


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
        *,
        routes: Sequence[RetrievalRoute] = (),
        stages: Sequence[RetrievalStage] = (),
    ) -> None:
        """``routes`` and ``stages`` add an application's own (:mod:`~graphrag_orm.retrieval.routes`),
        named in the options like the toolkit's; a name already taken is ``invalid-option``."""
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
        builtin: list[RetrievalRoute] = [self.vector, self.full_text, *([self.graph] if self.graph else [])]
        #: Every route this retriever can search, by name.
        self.routes: dict[str, RetrievalRoute] = _named([*builtin, *(check_route(r) for r in routes)], "route")
        #: Every stage this retriever can apply, by name.
        given = [check_stage(s) for s in stages]
        # The passage stage is every retriever's; one of the application's under its name replaces it.
        builtin_stages = [] if any(stage.name == PASSAGE_STAGE for stage in given) else [PassageStage()]
        self.stages: dict[str, RetrievalStage] = _named([*builtin_stages, *given], "stage")
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
        (``retrieval-failed``) or the sandbox refuses the expansion (its code), or, before
        any read, ``expansion-not-trusted`` for an expansion in a scope the application has
        not marked trusted; never partial evidence.
        """
        options = options or self.options
        check_question(question, options.max_question_chars)
        self._check_names(options)
        if options.scope is not None and options.expansion is not None and not options.expansion.trusted:
            raise untrusted_expansion()
        with span(SpanName.RETRIEVE, routes=sorted(str(r) for r in options.routes)) as traced:
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

    async def resolve_scope(self, scope: Scope) -> ResolvedScope:
        """The documents and byte ranges ``scope`` names, as retrieval inside it sees them.

        Raises ``ScopeError`` as :meth:`retrieve` does for the same scope.
        """
        return await self.scopes.resolve(scope)

    def _check_names(self, options: RetrievalOptions) -> None:
        """Every route and stage the options name is one this retriever has."""
        for name in sorted(options.routes):
            if name not in self.routes:
                why = "the graph route needs an ontology" if name == Route.GRAPH else f"no route is named {name}"
                raise QuestionRefused(ErrorCode.ROUTE_NOT_AVAILABLE, why)
        for name in options.stages:
            if name not in self.stages:
                raise QuestionRefused(ErrorCode.ROUTE_NOT_AVAILABLE, f"no stage is named {name}")

    def _ordered(self, options: RetrievalOptions) -> list[RetrievalRoute]:
        names = [r for r in _FIRST if r in options.routes] + sorted(set(options.routes) - set(_FIRST))
        return [self.routes[name] for name in names]

    async def _retrieve(self, question: str, options: RetrievalOptions, scope: ResolvedScope | None) -> Evidence:
        provenance = await self._provenance(options)
        if scope is not None and scope.empty:
            return _nothing_in(scope, question, options, provenance)
        request = RouteRequest(question, options, scope)
        routes = self._ordered(options)
        parts = [await route.plan(request) for route in routes if not route.follows]
        try:
            found = await self._search_and_fuse(request, parts, [r for r in routes if r.follows])
        except _ROUTE_ERRORS as error:
            raise RetrievalFailed(ErrorCode.RETRIEVAL_FAILED, f"a route failed: {type(error).__name__}") from error
        return await self._evidence(request, found, provenance)

    def _fused_items(self, options: RetrievalOptions) -> int:
        """Winners the fusion returns: ``max_items``, or more when a stage wants them."""
        wanted = [self.stages[name].wants(options) for name in options.stages]
        return max([options.max_items, *(min(MAX_STAGE_ITEMS, w) for w in wanted)])

    async def _search_and_fuse(
        self, request: RouteRequest, parts: Sequence[RouteSearch | RouteRead], followers: Sequence[RetrievalRoute]
    ) -> _Found:
        """The routes' searches, fusion and the winners' projection: one statement; with routes
        that follow, the searches, then those routes, then the fusion of all."""
        options = request.options
        searches = [check_search(p) for p in parts if isinstance(p, RouteSearch)]
        reads = [p for p in parts if isinstance(p, RouteRead)]
        parameters: dict[str, Any] = {"maxItems": self._fused_items(options), **_fusion(options)}
        for search in searches:
            parameters.update(search.parameters)
        if not followers and searches:
            parameters |= {"hits": _hits(reads), "reserved": _reserved(reads, options)}
            result = await self.store.read(
                self.statements.evidence(searches, options.neighbour_chunks), parameters, name="retrieval.evidence"
            )
            row = result.single() or {}
            kept = row.get("kept") or {}
            outcomes = [
                search.counted(int(kept.get(search.column) or 0), _found_count(kept, search)) for search in searches
            ]
            outcomes += [read.outcome() for read in reads]
            return _Found(tuple(outcomes), int(row.get("total") or 0), list(row.get("items") or []))
        row = {}
        if any(search.subquery for search in searches):
            result = await self.store.read(self.statements.search(searches), parameters, name="retrieval.search")
            row = result.single() or {}
        found = [search.outcome(row.get(search.column) or [], _found_count(row, search)) for search in searches]
        earlier = {search.route: outcome.candidates for search, outcome in zip(searches, found, strict=True)}
        earlier |= {read.route: read.candidates for read in reads}
        for route in followers:
            read = await route.plan(RouteRequest(request.question, options, request.scope, earlier))
            if not isinstance(read, RouteRead):
                raise TypeError(f"the route {route.name} follows the others, so it must read for itself")
            reads.append(read)
            earlier[read.route] = read.candidates
        hits = [
            hit
            for search, outcome in zip(searches, found, strict=True)
            for hit in ranked_hits(search.route, outcome.candidates)
        ]
        result = await self.store.read(
            self.statements.fuse(options.neighbour_chunks),
            {
                **_fusion(options),
                "maxItems": parameters["maxItems"],
                "hits": hits + _hits(reads),
                "reserved": _reserved(reads, options),
            },
            name="retrieval.fuse",
        )
        fused = result.single() or {}
        outcomes = [*found, *(read.outcome() for read in reads)]
        return _Found(tuple(outcomes), int(fused.get("total") or 0), list(fused.get("items") or []))

    async def _evidence(self, request: RouteRequest, found: _Found, provenance: Provenance) -> Evidence:
        """Items in rank order through the stages and the budget, then context, limits and the scope trace."""
        question, options, scope = request.question, request.options, request.scope
        limits: list[Limit] = list(scope.limits) if scope else []
        limits += [limit for outcome in found.outcomes for limit in outcome.limits]
        if options.candidates_capped:
            limits.append(Limit(name=LimitName.CANDIDATES_PER_ROUTE, value=options.route_candidates))
        ranked, neighbours_of = _ranked(found.items, scope, options.fusion)
        ranked, stage_limits = await self._stages(request, ranked)
        limits += stage_limits
        budget = apply_budget(ranked, options.max_items, options.utf8_budget)
        limits += budget.limits
        omitted = budget.omitted + (found.total - len(found.items))
        if found.total > len(found.items) and not any(lim.name == LimitName.MAX_ITEMS for lim in limits):
            limits.append(Limit(name=LimitName.MAX_ITEMS, value=options.max_items))
        context: list[ContextItem] = []
        if budget.items and options.neighbour_chunks:
            context += neighbours(budget.items, neighbours_of, scope)
        if options.expansion is not None:
            rows, expansion_limits = await expand(
                self.store,
                options.expansion,
                budget.items,
                scope,
                self.sandbox,
                named=self.statements.named,
                fence=fence_for(self.statements.names, options.expansion.vouched_tenant),
            )
            context += rows
            limits += expansion_limits
        context, context_limits = bounded(context, options.max_context_utf8_bytes)
        limits += context_limits
        trace = None
        if scope is not None:
            routes = tuple(outcome.scope for outcome in found.outcomes if outcome.scope)
            trace = ScopeTrace(kind=scope.kind, documents=len(scope.ranges), chunks=scope.chunks, routes=routes)
        route_context = tuple(item for outcome in found.outcomes for item in outcome.context)
        return Evidence(
            question=question,
            items=budget.items,
            context=(*route_context, *context),
            utf8_bytes=budget.utf8_bytes,
            omitted_items=omitted,
            limits_reached=tuple(limits),
            provenance=provenance,
            scope=trace,
        )

    async def _stages(
        self, request: RouteRequest, ranked: list[EvidenceItem]
    ) -> tuple[list[EvidenceItem], list[Limit]]:
        """The stages the options name, in order; each may reorder or leave out items, never add one."""
        limits: list[Limit] = []
        for name in request.options.stages:
            stage = self.stages[name]
            with span(SpanName.RETRIEVE_STAGE, stage=name, candidates=len(ranked)) as traced:
                result = await stage.apply(request, tuple(ranked))
                given = {item.chunk_id for item in ranked}
                ids = [item.chunk_id for item in result.items]
                if not set(ids) <= given or len(ids) != len(set(ids)):
                    raise RetrievalFailed(
                        ErrorCode.RETRIEVAL_FAILED, f"the stage {name} returned an item it was not given"
                    )
                ranked = list(result.items)
                limits += result.limits
                traced.set("items", len(ranked))
                traced.set("limits", [limit.name for limit in result.limits])
        return ranked, limits

    async def _provenance(self, options: RetrievalOptions) -> Provenance:
        if self._server_version is None:
            self._server_version = await server_version(self.store)
        indexes = [index for route in self._ordered(options) for index in route.indexes]
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
    entries: Sequence[Mapping[str, Any]], scope: ResolvedScope | None, fusion: str
) -> tuple[list[EvidenceItem], dict[str, list[dict[str, Any]]]]:
    """The fused winners as evidence items, in rank order, and each one's neighbours by chunk id."""
    ranked: list[EvidenceItem] = []
    neighbours_of: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        chunk = entry["chunk"]
        # Re-checked against the scope here too: defence in depth for every item.
        if scope is not None and not scope.contains(chunk["documentId"], chunk["startByte"], chunk["endByte"]):
            continue
        ranks = route_ranks(entry["ranks"], fusion)
        ranked.append(_item(chunk, entry["document"] or {}, float(entry["score"]), ranks))
        neighbours_of[chunk["id"]] = entry["neighbours"]
    return ranked, neighbours_of


def _pages(page_starts: Sequence[int] | None, start: int, end: int) -> tuple[PageStart, ...] | None:
    if not page_starts:
        return None
    first = max(bisect.bisect_right(page_starts, start), 1)
    last = max(bisect.bisect_right(page_starts, max(end - 1, start)), first)
    return tuple(PageStart(page=p, start_byte=int(page_starts[p - 1])) for p in range(first, last + 1))


def _item(
    chunk: Mapping[str, Any], document: Mapping[str, Any], score: float, ranks: tuple[RouteRank, ...]
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
        routes=ranks,
        pages=_pages(document.get("pageStarts"), start, end),
        grounding=Grounding.stored(chunk.get("grounding")),
        text_origin=document.get("textOrigin"),
    )


def _fusion(options: RetrievalOptions) -> dict[str, Any]:
    """The fusion's parameters: the method, reciprocal rank's k and whether overlapping chunks share votes."""
    return {"fusion": options.fusion.value, "rrf": RRF_K, "sharedVotes": options.shared_votes}


def _named(parts: Sequence[Any], kind: str) -> dict[str, Any]:
    """``parts`` by name; ``invalid-option`` when two share one."""
    named: dict[str, Any] = {}
    for part in parts:
        if part.name in named:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"two {kind}s are named {part.name}")
        named[str(part.name)] = part
    return named


def _hits(reads: Sequence[RouteRead]) -> list[dict[str, Any]]:
    """The ranked hits of the routes that read for themselves, for the fusion's ``$hits``."""
    return [hit for read in reads for hit in ranked_hits(read.route, read.candidates)]


def _reserved(reads: Sequence[RouteRead], options: RetrievalOptions) -> list[str]:
    """Chunk ids that keep a place among the winners, at most ``max_items``, first come first kept."""
    return list(dict.fromkeys(chunk for read in reads for chunk in read.reserved))[: options.max_items]


def _found_count(row: Mapping[str, Any], search: RouteSearch) -> int | None:
    """How many the search's index returned before its filter, when it counts them."""
    if not search.counts_found:
        return None
    return int(row.get(f"{search.column}{FOUND_SUFFIX}") or 0)
