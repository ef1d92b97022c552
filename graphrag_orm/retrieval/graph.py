"""The graph route: from anchor things along typed facts to the chunks that ground each fact.

Anchors are the things whose names match the question (the names full-text index) and
the things mentioned in the vector and full-text routes' chunks. From them, facts of
the ontology's types are followed (either direction) up to ``max_hops``, never through a
thing with more than ``max_degree`` facts, and at most ``max_facts`` per question; each
bound reached is reported. A fact's evidence is the chunks that mention both its ends
(so citations always come from chunks), and those become the route's ranked candidates,
fused by rank with the other routes. The facts themselves are given to the model as
labelled context, never as citations. The route's statements run in one read
transaction, so it reads one consistent graph. In a tenanted graph each statement reads
the tenant's things, facts and chunks only (``$tenant``, docs/tenancy.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import ContextItem, Route
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.fusion import Candidate
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.options import GraphOptions
from graphrag_orm.retrieval.routes import RouteRead, RouteRequest
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.retrieval.statements import GraphStatements
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.tenancy import check_fenced
from graphrag_orm.values import Limit

__all__ = ["FactHit", "GraphResult", "GraphRoute", "describe_facts"]


@dataclass(frozen=True)
class FactHit:
    """A fact reached from the anchors, at ``hop`` (1 = touching an anchor)."""

    element_id: str
    type: str
    source: str
    target: str
    hop: int


@dataclass(frozen=True)
class GraphResult:
    candidates: list[Candidate]
    context: list[ContextItem]
    limits: list[Limit]
    facts: int


class GraphRoute:
    """Runs the graph route for one layout and ontology; reads only.

    As a route (:class:`~graphrag_orm.retrieval.routes.RetrievalRoute`) it follows the
    others: its anchor chunks are their best ``anchor_chunks`` each, alternating (vector,
    full text, then any other route by name), and its best candidates keep up to
    ``reserved_items`` places among the winners, since rank fusion favours chunks several
    routes found and a chunk that only grounds a fact (a link in a chain the question does
    not resemble) would never make the budget.
    """

    name = Route.GRAPH
    follows = True

    def __init__(self, store: Store, model: LexicalModel, ontology: Ontology) -> None:
        # In a tenanted graph every anchor, fact and grounding chunk is the store's tenant's,
        # in the statement itself (docs/tenancy.md): the layout and the store must agree.
        check_fenced(model.layout.tenanted, store.tenanted, "the graph route")
        self.store = store
        self.ontology = ontology
        self.statements = GraphStatements.of(model, ontology)

    @property
    def indexes(self) -> tuple[str, ...]:
        return (self.statements.names_index,)

    async def plan(self, request: RouteRequest) -> RouteRead:
        options = request.options
        top = options.graph.anchor_chunks
        first = [Route.VECTOR, Route.FULL_TEXT]
        order = first + sorted(name for name in request.earlier if name not in first)
        lists = [request.earlier.get(name, ())[:top] for name in order]
        anchors = [c.chunk_id for row in zip_longest(*lists) for c in row if c is not None] if lists else []
        found = await self.run(request.question, list(dict.fromkeys(anchors)), options.graph, request.scope)
        candidates = tuple(found.candidates[: options.route_candidates])
        reserved = tuple(c.chunk_id for c in candidates[: min(options.graph.reserved_items, options.max_items)])
        return RouteRead(self.name, candidates, tuple(found.context), tuple(found.limits), reserved)

    async def run(
        self, question: str, anchor_chunks: list[str], options: GraphOptions, scope: ResolvedScope | None = None
    ) -> GraphResult:
        """Candidates and fact context; with ``scope``, only grounding chunks inside it are
        kept, and so only the facts they ground are shown."""
        if not self.ontology.fact_types:
            return GraphResult([], [], [], 0)

        async def work(tx: StoreTransaction) -> GraphResult:
            return await self._run(tx, question, anchor_chunks, options, scope)

        return await self.store.read_work(work)

    async def _run(
        self,
        tx: StoreTransaction,
        question: str,
        anchor_chunks: list[str],
        options: GraphOptions,
        scope: ResolvedScope | None,
    ) -> GraphResult:
        anchors, anchor_limits = await self._anchors(tx, question, anchor_chunks, options)
        facts, limits = await self._expand(tx, anchors, options)
        limits = [*anchor_limits, *limits]
        grounding = await self._grounding(tx, facts, options.chunks_per_fact, scope)
        candidates: list[Candidate] = []
        seen: set[str] = set()
        for fact in facts:
            for chunk_id in grounding.get(fact.element_id, []):
                if chunk_id not in seen:
                    seen.add(chunk_id)
                    # The native score says how close to an anchor the fact lies.
                    candidates.append(Candidate(chunk_id, 1.0 / fact.hop))
        context = [
            ContextItem(text=f"({fact.source}) -[{fact.type}]-> ({fact.target})", reason=f"graph-fact, hop {fact.hop}")
            for fact in facts
            if fact.element_id in grounding
        ]
        return GraphResult(candidates, context, limits, len(facts))

    async def _anchors(
        self, tx: StoreTransaction, question: str, anchor_chunks: list[str], options: GraphOptions
    ) -> tuple[list[str], list[Limit]]:
        """Element ids of anchor things, best first: those the top chunks mention, then names matching
        the question; and ``GraphAnchorsTenantOverFetch`` when, in a tenanted graph, the names index
        filled its ``max_anchors`` with hits of which the exact tenant check dropped some (another
        tenant's id holding the tenant's words), so fewer anchors came from the names."""
        st = self.statements
        found: list[str] = []
        limits: list[Limit] = []
        if anchor_chunks:
            result = await tx.run(
                st.anchors_by_chunks,
                {"ids": anchor_chunks, "k": options.max_anchors},
                name="retrieval.graph.anchors.chunks",
            )
            found.extend(result.column("thing"))
        query = to_query(question)
        if query:
            result = await tx.run(
                st.anchors_by_names,
                {"index": st.names_index, "query": query, "k": options.max_anchors},
                name="retrieval.graph.anchors.names",
            )
            if self.statements.names.tenanted:
                row = result.single() or {}
                kept = sorted(row.get("kept") or [], key=lambda hit: (-float(hit["score"]), str(hit["thing"])))
                found.extend(str(hit["thing"]) for hit in kept)
                if int(row.get("found") or 0) >= options.max_anchors > len(kept):
                    limits.append(Limit(name=LimitName.GRAPH_ANCHORS_TENANT_OVER_FETCH, value=options.max_anchors))
            else:
                found.extend(result.column("thing"))
        return list(dict.fromkeys(found))[: options.max_anchors], limits

    async def _expand(
        self, tx: StoreTransaction, anchors: list[str], options: GraphOptions
    ) -> tuple[list[FactHit], list[Limit]]:
        limits: list[Limit] = []
        if not anchors:
            return [], limits
        # Hubs are neither anchors to expand from nor things to pass through.
        result = await tx.run(self.statements.degree, {"ids": anchors}, name="retrieval.graph.degree")
        degree = {row["thing"]: int(row["degree"]) for row in result}
        frontier = [a for a in anchors if degree.get(a, 0) <= options.max_degree]
        if len(frontier) < len(anchors):
            limits.append(Limit(name=LimitName.MAX_DEGREE, value=options.max_degree))
        visited = set(anchors)
        facts: list[FactHit] = []
        seen_facts: set[str] = set()
        hop = 0
        while frontier and hop < options.max_hops:
            hop += 1
            remaining = options.max_facts - len(facts)
            # Facts come in the order of the frontier thing they start from (best anchor first).
            result = await tx.run(
                self.statements.expand,
                {"frontier": frontier, "limit": remaining + 1 + len(seen_facts)},
                name="retrieval.graph.expand",
            )
            next_frontier: list[str] = []
            hub_skipped = False
            for row in result:
                element_id = row["fact"]
                if element_id in seen_facts:
                    continue
                if len(facts) == options.max_facts:
                    limits.append(Limit(name=LimitName.MAX_FACTS, value=options.max_facts))
                    return facts, limits
                seen_facts.add(element_id)
                facts.append(FactHit(element_id, row["factType"], row["source"], row["target"], hop))
                other = row["other"]
                if other not in visited:
                    visited.add(other)
                    if int(row["degree"]) > options.max_degree:
                        hub_skipped = True
                    else:
                        next_frontier.append(other)
            if hub_skipped and not any(lim.name == LimitName.MAX_DEGREE for lim in limits):
                limits.append(Limit(name=LimitName.MAX_DEGREE, value=options.max_degree))
            frontier = next_frontier
        if frontier and hop == options.max_hops:
            limits.append(Limit(name=LimitName.MAX_HOPS, value=options.max_hops))
        return facts, limits

    async def _grounding(
        self, tx: StoreTransaction, facts: list[FactHit], per_fact: int, scope: ResolvedScope | None
    ) -> dict[str, list[str]]:
        """For each fact, the chunks (of documents that state it) mentioning both of its ends."""
        if not facts:
            return {}
        st = self.statements
        result = await tx.run(
            st.grounding_scoped if scope is not None else st.grounding,
            {
                "ids": [fact.element_id for fact in facts],
                "perFact": per_fact,
                **(scope.parameters if scope is not None else {}),
            },
            name="retrieval.graph.grounding",
        )
        return {row["fact"]: list(row["chunks"]) for row in result if row["chunks"]}


def describe_facts(result: GraphResult) -> dict[str, Any]:
    """Counts for tracing: facts followed and candidates found."""
    return {"facts": result.facts, "candidates": len(result.candidates)}
