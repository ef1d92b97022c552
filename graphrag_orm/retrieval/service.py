"""The retriever: routes, rank fusion, the evidence budget, context, scope and provenance.

Routes return chunk ids and native scores only; after fusion, one query projects the
fields of the items that can enter the budget. Embeddings are never read back: the
vector route's query vector is a parameter, and exact scoring inside a small scope
happens on the server. A failed or cancelled route fails the whole retrieval: it
never quietly falls back to the routes that worked.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import math
from collections.abc import Sequence
from itertools import zip_longest
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError
from neo4j.graph import Node, Relationship
from neomodel import adb

from graphrag_orm.codes import LimitName
from graphrag_orm.store.connection import server_version
from graphrag_orm.embeddings import Embedder, EmbeddingSet, validate_vectors
from graphrag_orm.errors import GraphRagError
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
from graphrag_orm.retrieval.budget import apply_budget, cut_at_boundary
from graphrag_orm.retrieval.fusion import RRF_K, Candidate, Fused, dedupe, fuse
from graphrag_orm.retrieval.graph import GraphRoute
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.options import CypherExpansion, RetrievalOptions
from graphrag_orm.retrieval.scope import ResolvedScope, ScopeResolver
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.store.batches import NodeWrites
from graphrag_orm.values import Limit

MAX_OVER_FETCH = 10_000


class QuestionRefused(GraphRagError):
    """The question cannot be retrieved: ``empty-question``, ``question-too-long``, ``history-not-supported``."""


class RetrievalFailed(GraphRagError):
    """A route or a context query failed (``retrieval-failed``); no partial evidence is returned."""


class Retriever:
    """Retrieves evidence from one layout's graph with one embedding set."""

    def __init__(
        self,
        model: LexicalModel,
        embedding_set: EmbeddingSet,
        embedder: Embedder,
        options: RetrievalOptions | None = None,
        ontology: Ontology | None = None,
    ) -> None:
        self.model = model
        self.graph = GraphRoute(model, ontology) if ontology is not None else None
        self.embedding_set = embedding_set
        self.embedder = embedder
        self.options = options or RetrievalOptions()
        layout = model.layout
        self.vector_index = layout.vector_index_name(embedding_set.vector_index_name)
        self.fulltext_index = layout.fulltext_index_name()
        self.chunks = NodeWrites(model.chunk)
        self.documents = NodeWrites(model.document)
        self.scopes = ScopeResolver(model)
        #: Unscoped hybrid retrieval in one statement; False takes the general path (tests compare them).
        self.one_statement = True
        self._server_version: str | None = None
        c = self.chunks
        self._id, self._doc = c.key, c.stored("document_id")
        self._start, self._end = c.stored("start_byte"), c.stored("end_byte")
        self._text, self._embedding = c.stored("text"), c.stored("embedding")
        self._order = c.stored("order")

    # ------------------------------------------------------------ the call

    async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Evidence:
        """Evidence for one standalone question (history is refused: answers rewrite follow-ups)."""
        options = options or self.options
        if options.history:
            raise QuestionRefused(
                "history-not-supported",
                "the retriever takes one standalone question; pass history to answers, which rewrites it",
            )
        return await self.retrieve_standalone(question, options)

    async def retrieve_standalone(self, question: str, options: RetrievalOptions) -> Evidence:
        """Evidence for ``question`` as given (used by answers after a rewrite)."""
        self._check_question(question, options)
        with span(SpanName.RETRIEVE, routes=sorted(r.value for r in options.routes)) as traced:
            scope: ResolvedScope | None = None
            if options.scope is not None:
                scope = await self.scopes.resolve(options.scope)
                traced.set("scope", scope.kind)
                traced.set("scope_chunks", scope.chunks)
            evidence = await self._retrieve(question, options, scope)
            traced.set("items", len(evidence.items))
            traced.set("context_items", len(evidence.context))
            traced.set("omitted_items", evidence.omitted_items)
            traced.set("utf8_bytes", evidence.utf8_bytes)
            traced.set("limits", [limit.name for limit in evidence.limits_reached])
            return evidence

    def _check_question(self, question: str, options: RetrievalOptions) -> None:
        if not question or not question.strip():
            raise QuestionRefused("empty-question", "the question is empty")
        if len(question) > options.max_question_chars:
            raise QuestionRefused(
                "question-too-long",
                f"the question has {len(question)} characters; the bound is {options.max_question_chars}",
            )

    async def _retrieve(self, question: str, options: RetrievalOptions, scope: ResolvedScope | None) -> Evidence:
        limits: list[Limit] = list(scope.limits) if scope else []
        provenance = await self._provenance(options)
        if scope is not None and scope.empty:
            empty_trace = ScopeTrace(
                kind=scope.kind,
                documents=len(scope.ranges),
                chunks=scope.chunks,
                routes=tuple(
                    ScopeRoute(route=r, strategy=ScopeStrategy.EMPTY, asked=0, kept=0) for r in sorted(options.routes)
                ),
            )
            return Evidence(
                question=question, items=(), limits_reached=tuple(limits), provenance=provenance, scope=empty_trace
            )
        query = to_query(question)
        if scope is None and query and options.routes == {Route.VECTOR, Route.FULL_TEXT} and self.one_statement:
            # The common case, unscoped hybrid: search, fuse and project in one round trip.
            try:
                total, considered, details, neighbours = await self._hybrid_in_one(question, query, options)
            except (Neo4jError, DriverError, OSError) as error:
                raise RetrievalFailed("retrieval-failed", f"a route failed: {type(error).__name__}") from error
            return await self._assemble(
                question, options, None, limits, total, considered, details, neighbours, [], [], provenance
            )
        total_chunks = await self._total_chunks() if scope is not None else 0
        tasks: dict[Route, asyncio.Task[tuple[list[Candidate], ScopeRoute | None, Limit | None]]] = {}
        both = scope is None and query and {Route.VECTOR, Route.FULL_TEXT} <= options.routes
        if both:
            # Unscoped hybrid: both index queries in one statement, one round trip.
            combined = asyncio.create_task(self._hybrid(question, query, options))
            tasks[Route.VECTOR] = asyncio.create_task(_first(combined))
            tasks[Route.FULL_TEXT] = asyncio.create_task(_second(combined))
        for route in sorted(options.routes):
            if both and route in (Route.VECTOR, Route.FULL_TEXT):
                continue
            if route == Route.VECTOR:
                tasks[route] = asyncio.create_task(self._vector(question, options, scope, total_chunks))
            elif route == Route.FULL_TEXT:
                tasks[route] = asyncio.create_task(self._full_text(question, options, scope, total_chunks))
            elif self.graph is None:
                for task in tasks.values():
                    task.cancel()
                raise QuestionRefused("route-not-available", "the graph route needs an ontology")
        try:
            await asyncio.gather(*tasks.values())
        except BaseException as error:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)
            if isinstance(error, Neo4jError | DriverError | OSError):
                raise RetrievalFailed("retrieval-failed", f"a route failed: {type(error).__name__}") from error
            raise
        lists: dict[Route, list[Candidate]] = {}
        scope_routes: list[ScopeRoute] = []
        for route, task in tasks.items():
            candidates, scope_route, limit = task.result()
            lists[route] = candidates
            if scope_route:
                scope_routes.append(scope_route)
            if limit:
                limits.append(limit)
        context_facts: list[ContextItem] = []
        if Route.GRAPH in options.routes and self.graph is not None:
            # Anchors also come from the other routes' chunks, best first, alternating.
            top = options.graph.anchor_chunks
            anchor_chunks = [
                c.chunk_id
                for pair in zip_longest(lists.get(Route.VECTOR, [])[:top], lists.get(Route.FULL_TEXT, [])[:top])
                for c in pair
                if c is not None
            ]
            scope_filter = (self._scope_filter("c"), self._scope_params(scope)) if scope is not None else None
            try:
                result = await self.graph.run(question, dedupe_ids(anchor_chunks), options.graph, scope_filter)
            except (Neo4jError, DriverError, OSError) as error:
                raise RetrievalFailed("retrieval-failed", f"the graph route failed: {type(error).__name__}") from error
            lists[Route.GRAPH] = result.candidates[: options.candidates_per_route]
            limits.extend(result.limits)
            context_facts = result.context
        fused = fuse(lists)
        considered = self._reserve(fused, lists.get(Route.GRAPH, []), options)
        details, neighbours = await self._details([f.chunk_id for f in considered], options.neighbour_chunks)
        return await self._assemble(
            question,
            options,
            scope,
            limits,
            len(fused),
            considered,
            details,
            neighbours,
            context_facts,
            scope_routes,
            provenance,
        )

    async def _assemble(
        self,
        question: str,
        options: RetrievalOptions,
        scope: ResolvedScope | None,
        limits: list[Limit],
        total_fused: int,
        considered: list[Fused],
        details: dict[str, dict[str, Any]],
        neighbours: dict[str, list[list[Any]]],
        context_facts: list[ContextItem],
        scope_routes: list[ScopeRoute],
        provenance: Provenance,
    ) -> Evidence:
        """Items in rank order through the budget, then context, limits and the scope trace."""
        ranked: list[EvidenceItem] = []
        for item in considered:
            row = details.get(item.chunk_id)
            # Re-checked against the scope here too: defence in depth for every item.
            if row is None or (
                scope is not None and not scope.contains(row["documentId"], row["startByte"], row["endByte"])
            ):
                continue
            ranked.append(self._item(row, item.score, item.routes))
        budget = apply_budget(ranked, options.max_items, options.max_utf8_bytes)
        limits.extend(budget.limits)
        omitted = budget.omitted + (total_fused - len(considered))
        if total_fused > len(considered) and not any(lim.name == LimitName.MAX_ITEMS for lim in limits):
            limits.append(Limit(name=LimitName.MAX_ITEMS, value=options.max_items))
        context, context_limits = await self._context(budget.items, options, scope, neighbours)
        context = context_facts + context
        limits.extend(context_limits)
        trace: ScopeTrace | None = None
        if scope is not None:
            trace = ScopeTrace(
                kind=scope.kind, documents=len(scope.ranges), chunks=scope.chunks, routes=tuple(scope_routes)
            )
        return Evidence(
            question=question,
            items=budget.items,
            context=tuple(context),
            utf8_bytes=budget.utf8_bytes,
            omitted_items=omitted,
            limits_reached=tuple(limits),
            provenance=provenance,
            scope=trace,
        )

    @staticmethod
    def _reserve(fused: list[Fused], graph: list[Candidate], options: RetrievalOptions) -> list[Fused]:
        """The first ``max_items`` fused items, keeping room for the graph route's best candidates.

        Rank fusion favours chunks several routes found; a chunk that only grounds a fact
        (a link in a chain the question does not resemble) would never make the budget.
        So up to ``graph.reserved_items`` of the graph route's top candidates are kept,
        displacing the lowest-ranked others; the order stays the fused order, and what is
        displaced is counted as omitted like anything else the budget leaves out.
        """
        limit = options.max_items
        reserved = [c.chunk_id for c in graph[: min(options.graph.reserved_items, limit)]]
        if not reserved:
            return fused[:limit]
        keep = set(reserved)
        others = [f.chunk_id for f in fused if f.chunk_id not in keep][: limit - len(keep)]
        chosen = keep | set(others)
        return [f for f in fused if f.chunk_id in chosen]

    # -------------------------------------------------------------- routes

    def _scope_filter(self, var: str) -> str:
        return (
            f"({var}.{self._doc} IN $whole OR any(r IN $ranges WHERE r.documentId = {var}.{self._doc} "
            f"AND {var}.{self._start} >= r.startByte AND {var}.{self._end} <= r.endByte))"
        )

    def _scope_params(self, scope: ResolvedScope) -> dict[str, Any]:
        return {"whole": scope.whole_documents, "ranges": scope.range_rows}

    def _over_fetch(self, k: int, scope: ResolvedScope, total_chunks: int) -> int:
        # About twice the limit inside the scope, in expectation: scale by the share of
        # the graph the scope holds; at least the limit, at most 10,000.
        share = scope.chunks / total_chunks if total_chunks else 1.0
        wanted = math.ceil(2 * k / share) if share > 0 else MAX_OVER_FETCH
        return max(k, min(MAX_OVER_FETCH, wanted))

    async def _vector(
        self, question: str, options: RetrievalOptions, scope: ResolvedScope | None, total_chunks: int
    ) -> tuple[list[Candidate], ScopeRoute | None, Limit | None]:
        vectors = await self.embedder.embed([question])
        (vector,) = validate_vectors(vectors, 1, self.embedding_set)
        k = options.candidates_per_route
        label = self.chunks.label
        search = f"SEARCH c IN (VECTOR INDEX {self.vector_index} FOR $vector LIMIT $fetch) SCORE AS score"
        if scope is None:
            rows, _ = await adb.cypher_query(
                f"MATCH (c:{label}) {search} RETURN c.{self._id}, score", {"vector": vector, "fetch": k}
            )
            return dedupe([Candidate(r[0], float(r[1])) for r in rows])[:k], None, None
        if scope.chunks <= options.scope_exact_chunks:
            function = f"vector.similarity.{self.embedding_set.similarity.value}"
            rows, _ = await adb.cypher_query(
                f"CALL () {{ UNWIND $whole AS doc MATCH (c:{label} {{{self._doc}: doc}}) RETURN c "
                f"UNION UNWIND $ranges AS r MATCH (c:{label} {{{self._doc}: r.documentId}}) "
                f"WHERE c.{self._start} >= r.startByte AND c.{self._end} <= r.endByte RETURN c }} "
                f"WITH c WHERE c.{self._embedding} IS NOT NULL "
                f"WITH c, {function}(c.{self._embedding}, $vector) AS score "
                f"RETURN c.{self._id}, score ORDER BY score DESC, c.{self._id} LIMIT $k",
                {"vector": vector, "k": k, **self._scope_params(scope)},
            )
            kept = [Candidate(r[0], float(r[1])) for r in rows]
            return kept, ScopeRoute(route=Route.VECTOR, strategy=ScopeStrategy.EXACT, asked=k, kept=len(kept)), None
        fetch = self._over_fetch(k, scope, total_chunks)
        rows, _ = await adb.cypher_query(
            f"MATCH (c:{label}) {search} WITH c, score WHERE {self._scope_filter('c')} "
            f"RETURN c.{self._id}, score ORDER BY score DESC LIMIT $k",
            {"vector": vector, "fetch": fetch, "k": k, **self._scope_params(scope)},
        )
        return _over_fetched(rows, k, fetch, total_chunks, Route.VECTOR, LimitName.VECTOR_SCOPE_OVER_FETCH)

    async def _hybrid_in_one(
        self, question: str, query: str, options: RetrievalOptions
    ) -> tuple[int, list[Fused], dict[str, dict[str, Any]], dict[str, list[list[Any]]]]:
        """Both routes, rank fusion and the winners' projection (with neighbours) in one statement.

        The fusion in Cypher is the same reciprocal rank fusion as :func:`fuse` (k = 60,
        ties by chunk id); a test compares the two paths item by item.
        """
        vectors = await self.embedder.embed([question])
        (vector,) = validate_vectors(vectors, 1, self.embedding_set)
        label = self.chunks.label
        rows, _ = await adb.cypher_query(
            f"CALL () {{ MATCH (c:{label}) SEARCH c IN (VECTOR INDEX {self.vector_index} FOR $vector LIMIT $k) "
            f"SCORE AS score WITH c.{self._id} AS id, score ORDER BY score DESC, id "
            "RETURN collect([id, score]) AS vector } "
            "CALL () { CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score "
            f"WITH node.{self._id} AS id, score ORDER BY score DESC, id RETURN collect([id, score]) AS fulltext }} "
            "WITH [i IN range(0, size(vector) - 1) | "
            "{id: vector[i][0], route: 'Vector', rank: i + 1, score: vector[i][1]}] "
            "+ [i IN range(0, size(fulltext) - 1) | "
            "{id: fulltext[i][0], route: 'FullText', rank: i + 1, score: fulltext[i][1]}] AS hits "
            "UNWIND hits AS hit "
            "WITH hit.id AS id, collect(hit) AS ranks, sum(1.0 / ($rrf + hit.rank)) AS fused "
            "ORDER BY fused DESC, id WITH collect({id: id, ranks: ranks, fused: fused}) AS everything "
            "WITH size(everything) AS total, everything[..$maxItems] AS top UNWIND top AS item "
            f"MATCH (c:{label} {{{self._id}: item.id}}) {self._neighbours_clause(options.neighbour_chunks)}"
            f"{self._projection()}, item.ranks, item.fused, total",
            {
                "vector": vector,
                "k": options.candidates_per_route,
                "index": self.fulltext_index,
                "query": query,
                "rrf": RRF_K,
                "maxItems": options.max_items,
            },
        )
        total = int(rows[0][13]) if rows else 0
        considered: list[Fused] = []
        details: dict[str, dict[str, Any]] = {}
        neighbours: dict[str, list[list[Any]]] = {}
        for row in rows:
            routes = tuple(
                RouteRank(
                    route=Route(rank["route"]),
                    rank=int(rank["rank"]),
                    native_score=float(rank["score"]),
                    rank_score=1.0 / (RRF_K + int(rank["rank"])),
                )
                for rank in sorted(row[11], key=lambda r: str(r["route"]))
            )
            considered.append(Fused(row[0], float(row[12]), routes))
            details[row[0]] = dict(zip(_DETAIL_KEYS, row[:10], strict=True))
            neighbours[row[0]] = list(row[10])
        return total, considered, details, neighbours

    def _projection(self) -> str:
        """Join chunk ``c`` to its document and return the fields evidence needs (in ``_DETAIL_KEYS``
        order), then ``neighbours``; never the embedding."""
        d = self.documents
        return (
            f"OPTIONAL MATCH (d:{d.label} {{{d.key}: c.{self._doc}}}) "
            f"RETURN c.{self._id} AS id, c.{self._doc} AS documentId, c.{self._text} AS text, "
            f"c.{self._start} AS startByte, c.{self._end} AS endByte, c.{self._order} AS ord, "
            f"d.{d.stored('source_uri')} AS sourceUri, d.{d.stored('title')} AS title, "
            f"d.{d.stored('page_starts')} AS pageStarts, d.{d.stored('text_origin')} AS textOrigin, neighbours"
        )

    def _neighbours_clause(self, hops: int, keep: str = "c, item, total") -> str:
        """Collect each chunk ``c``'s neighbours up to ``hops`` along NEXT_CHUNK as ``neighbours``
        (``keep``: the variables to carry when there are none to collect)."""
        label, next_type = self.chunks.label, self.model.layout.next_chunk_type
        fields = f"[n.{self._id}, n.{self._doc}, n.{self._text}, n.{self._start}, n.{self._end}, n.{self._order}]"
        if not hops:
            return f"WITH {keep}, [] AS neighbours "
        # hops is a validated int 1..4: a variable-length bound cannot be a parameter.
        return (
            f"CALL (c) {{ CALL (c) {{ MATCH (c)-[:{next_type}*1..{int(hops)}]->(n:{label}) RETURN n "
            f"UNION MATCH (n:{label})-[:{next_type}*1..{int(hops)}]->(c) RETURN n }} "
            f"RETURN collect({fields}) AS neighbours }} "
        )

    async def _hybrid(
        self, question: str, query: str, options: RetrievalOptions
    ) -> tuple[list[Candidate], list[Candidate]]:
        """The vector and full-text routes, unscoped, in one statement (each ranked by its own score)."""
        vectors = await self.embedder.embed([question])
        (vector,) = validate_vectors(vectors, 1, self.embedding_set)
        label = self.chunks.label
        rows, _ = await adb.cypher_query(
            f"CALL () {{ MATCH (c:{label}) SEARCH c IN (VECTOR INDEX {self.vector_index} FOR $vector LIMIT $k) "
            f"SCORE AS score WITH c, score ORDER BY score DESC RETURN collect([c.{self._id}, score]) AS vector }} "
            "CALL () { CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node AS c, score "
            f"WITH c, score ORDER BY score DESC RETURN collect([c.{self._id}, score]) AS fulltext }} "
            "RETURN vector, fulltext",
            {"vector": vector, "k": options.candidates_per_route, "index": self.fulltext_index, "query": query},
        )
        vector_hits, text_hits = rows[0]
        k = options.candidates_per_route
        return (
            dedupe([Candidate(c, float(score)) for c, score in vector_hits])[:k],
            dedupe([Candidate(c, float(score)) for c, score in text_hits])[:k],
        )

    async def _full_text(
        self, question: str, options: RetrievalOptions, scope: ResolvedScope | None, total_chunks: int
    ) -> tuple[list[Candidate], ScopeRoute | None, Limit | None]:
        query = to_query(question)
        k = options.candidates_per_route
        if not query:
            route = (
                ScopeRoute(route=Route.FULL_TEXT, strategy=ScopeStrategy.OVER_FETCH, asked=0, kept=0) if scope else None
            )
            return [], route, None
        call = "CALL db.index.fulltext.queryNodes($index, $query, {limit: $fetch}) YIELD node AS c, score"
        if scope is None:
            rows, _ = await adb.cypher_query(
                f"{call} RETURN c.{self._id}, score", {"index": self.fulltext_index, "query": query, "fetch": k}
            )
            return dedupe([Candidate(r[0], float(r[1])) for r in rows])[:k], None, None
        fetch = self._over_fetch(k, scope, total_chunks)
        rows, _ = await adb.cypher_query(
            f"{call} WITH c, score WHERE {self._scope_filter('c')} RETURN c.{self._id}, score ORDER BY score DESC LIMIT $k",
            {"index": self.fulltext_index, "query": query, "fetch": fetch, "k": k, **self._scope_params(scope)},
        )
        return _over_fetched(rows, k, fetch, total_chunks, Route.FULL_TEXT, LimitName.FULL_TEXT_SCOPE_OVER_FETCH)

    # ------------------------------------------------------------- details

    async def _details(
        self, chunk_ids: Sequence[str], hops: int = 0
    ) -> tuple[dict[str, dict[str, Any]], dict[str, list[list[Any]]]]:
        """Project the fields evidence needs for ``chunk_ids`` (never the embedding) and, in the
        same statement, each one's neighbours up to ``hops`` along NEXT_CHUNK."""
        if not chunk_ids:
            return {}, {}
        label = self.chunks.label
        neighbours = self._neighbours_clause(hops, keep="c")
        rows, _ = await adb.cypher_query(
            f"UNWIND $ids AS id MATCH (c:{label} {{{self._id}: id}}) {neighbours}{self._projection()}",
            {"ids": list(chunk_ids)},
        )
        found_neighbours = {row[0]: list(row[10]) for row in rows}
        return {row[0]: dict(zip(_DETAIL_KEYS, row[:10], strict=True)) for row in rows}, found_neighbours

    @staticmethod
    def _pages(page_starts: Sequence[int] | None, start: int, end: int) -> tuple[PageStart, ...] | None:
        if not page_starts:
            return None
        first = max(bisect.bisect_right(page_starts, start), 1)
        last = max(bisect.bisect_right(page_starts, max(end - 1, start)), first)
        return tuple(PageStart(page=p, start_byte=int(page_starts[p - 1])) for p in range(first, last + 1))

    def _item(self, row: dict[str, Any], score: float, routes: Any) -> EvidenceItem:
        start, end = int(row["startByte"]), int(row["endByte"])
        return EvidenceItem(
            chunk_id=row["id"],
            document_id=row["documentId"],
            source_uri=row["sourceUri"] or "",
            title=row["title"],
            text=row["text"],
            start_byte=start,
            end_byte=end,
            score=score,
            routes=routes,
            pages=self._pages(row["pageStarts"], start, end),
            grounding=Grounding.SOURCE,
            text_origin=row["textOrigin"],
        )

    # -------------------------------------------------------------- context

    async def _context(
        self,
        items: Sequence[EvidenceItem],
        options: RetrievalOptions,
        scope: ResolvedScope | None,
        neighbours: dict[str, list[list[Any]]],
    ) -> tuple[list[ContextItem], list[Limit]]:
        context: list[ContextItem] = []
        limits: list[Limit] = []
        if items and options.neighbour_chunks:
            context.extend(self._neighbours(items, neighbours, scope))
        if options.expansion is not None:
            rows, expansion_limit = await self._expansion(options.expansion, items, scope)
            context.extend(rows)
            if expansion_limit:
                limits.append(expansion_limit)
        bounded: list[ContextItem] = []
        used = 0
        for entry in context:
            size = len(entry.text.encode("utf-8"))
            if used + size > options.max_context_utf8_bytes:
                limits.append(Limit(name=LimitName.CONTEXT_UTF8_BYTES, value=options.max_context_utf8_bytes))
                break
            bounded.append(entry)
            used += size
        return bounded, limits

    @staticmethod
    def _neighbours(
        items: Sequence[EvidenceItem], found: dict[str, list[list[Any]]], scope: ResolvedScope | None
    ) -> list[ContextItem]:
        """The kept items' neighbours (read with the details), never an item, inside the scope."""
        cited = {item.chunk_id for item in items}
        rows: dict[str, list[Any]] = {}
        for item in items:
            for row in found.get(item.chunk_id, []):
                rows.setdefault(row[0], row)
        out: list[ContextItem] = []
        for chunk_id, doc, text, start, end, _order in sorted(rows.values(), key=lambda r: (r[1], r[5])):
            if chunk_id in cited:
                continue
            if scope is not None and not scope.contains(doc, int(start), int(end)):
                continue
            out.append(ContextItem(chunk_id=chunk_id, text=text, reason="neighbour"))
        return out

    async def _expansion(
        self, expansion: CypherExpansion, items: Sequence[EvidenceItem], scope: ResolvedScope | None
    ) -> tuple[list[ContextItem], Limit | None]:
        driver = adb.driver
        if driver is None:
            raise RetrievalFailed("retrieval-failed", "not connected")
        params = {
            **expansion.parameters,
            "chunkIds": [item.chunk_id for item in items],
            "scopeDocumentIds": scope.document_ids if scope is not None else None,
        }
        out: list[ContextItem] = []
        limit: Limit | None = None
        try:
            async with driver.session(
                database=getattr(adb, "_database_name", None), default_access_mode="READ"
            ) as session:
                tx = await session.begin_transaction(timeout=expansion.timeout_seconds)
                try:
                    result = await tx.run(expansion.cypher, params)
                    async for record in result:
                        if len(out) == expansion.max_rows:
                            limit = Limit(name=LimitName.EXPANSION_ROWS, value=expansion.max_rows)
                            break
                        row = {key: _plain(record[key]) for key in record.keys()}  # noqa: SIM118
                        chunk_id = row.get("chunkId") if isinstance(row.get("chunkId"), str) else None
                        out.append(
                            ContextItem(
                                chunk_id=chunk_id,
                                text=json.dumps(row, ensure_ascii=False, default=str, sort_keys=True),
                                reason="cypher-expansion",
                            )
                        )
                finally:
                    await tx.rollback()
        except Neo4jError as error:
            raise RetrievalFailed("retrieval-failed", f"the Cypher expansion failed: {error.code}") from error
        return out, limit

    # ----------------------------------------------------------- provenance

    async def _provenance(self, options: RetrievalOptions) -> Provenance:
        if self._server_version is None:
            self._server_version = await server_version()
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

    async def _total_chunks(self) -> int:
        rows, _ = await adb.cypher_query(f"MATCH (c:{self.chunks.label}) RETURN count(c)")
        return int(rows[0][0])


async def _first(combined: asyncio.Task[tuple[list[Candidate], list[Candidate]]]) -> tuple[list[Candidate], None, None]:
    return (await combined)[0], None, None


async def _second(
    combined: asyncio.Task[tuple[list[Candidate], list[Candidate]]],
) -> tuple[list[Candidate], None, None]:
    return (await combined)[1], None, None


def _over_fetched(
    rows: Sequence[Sequence[Any]], k: int, fetch: int, total_chunks: int, route: Route, limit: LimitName
) -> tuple[list[Candidate], ScopeRoute, Limit | None]:
    """A scoped route's candidates from an over-fetch of ``fetch``: the limit is reported when
    fewer than ``k`` survived the scope and the index held more than was fetched."""
    kept = dedupe([Candidate(r[0], float(r[1])) for r in rows])[:k]
    short = len(kept) < k and fetch < total_chunks
    return (
        kept,
        ScopeRoute(route=route, strategy=ScopeStrategy.OVER_FETCH, asked=fetch, kept=len(kept)),
        Limit(name=limit, value=fetch) if short else None,
    )


_DETAIL_KEYS = (
    "id",
    "documentId",
    "text",
    "startByte",
    "endByte",
    "order",
    "sourceUri",
    "title",
    "pageStarts",
    "textOrigin",
)


def dedupe_ids(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _plain(value: Any) -> Any:
    """Expansion values as JSON-able data; long numeric lists (embeddings) are left out."""
    if isinstance(value, list):
        if len(value) > 32 and all(isinstance(v, float) for v in value):
            return "(vector left out)"
        return [_plain(v) for v in value[:1000]]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Node | Relationship):
        properties: dict[str, Any] = dict(value)
        return {k: _plain(v) for k, v in properties.items() if not (isinstance(v, list) and len(v) > 32)}
    if isinstance(value, str) and len(value) > 10_000:
        return value[:10_000]
    return value


__all__ = ["QuestionRefused", "RetrievalFailed", "Retriever", "cut_at_boundary"]
