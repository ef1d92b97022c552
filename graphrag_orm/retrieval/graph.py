"""The graph route: from anchor things along typed facts to the chunks that ground each fact.

Anchors are the things whose names match the question (the names full-text index) and
the things mentioned in the vector and full-text routes' chunks. From them, facts of
the ontology's types are followed (either direction) up to ``max_hops``, never through a
thing with more than ``max_degree`` facts, and at most ``max_facts`` per question; each
bound reached is reported. A fact's evidence is the chunks that mention both its ends
(so citations always come from chunks), and those become the route's ranked candidates,
fused by rank with the other routes. The facts themselves are given to the model as
labelled context, never as citations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neomodel import adb
from pydantic import Field

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import ContextItem
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.fusion import Candidate
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.store.batches import NodeWrites
from graphrag_orm.values import Limit, Options


class GraphOptions(Options):
    """Bounds of the graph route; every one reached is reported in ``limits_reached``."""

    max_hops: int = Field(3, ge=1, le=5)
    max_degree: int = Field(50, ge=1, le=10_000)
    max_facts: int = Field(100, ge=1, le=1_000)
    max_anchors: int = Field(20, ge=1, le=200)
    anchor_chunks: int = Field(3, ge=0, le=20, description="top chunks per route whose things are anchors")
    chunks_per_fact: int = Field(2, ge=1, le=10)
    reserved_items: int = Field(12, ge=0, le=64, description="budget kept for the route's best candidates")


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
    """Runs the graph route for one layout and ontology; reads only."""

    def __init__(self, model: LexicalModel, ontology: Ontology) -> None:
        self.ontology = ontology
        chunks = NodeWrites(model.chunk)
        self.chunk_label, self.chunk_key = chunks.label, chunks.key
        self.chunk_document = chunks.stored("document_id")
        self.names_index = ontology.names_index_name(model.layout)
        self.fact_types = "|".join(ontology.fact_types)
        self.mention = ontology.mention_type
        self.labels = ontology.labels

    async def run(
        self,
        question: str,
        anchor_chunks: list[str],
        options: GraphOptions,
        scope_filter: tuple[str, dict[str, Any]] | None = None,
    ) -> GraphResult:
        """Candidates and fact context; ``scope_filter`` (a condition on ``c`` and its parameters)
        keeps grounding chunks, and so the facts shown, inside a scope."""
        limits: list[Limit] = []
        if not self.fact_types:
            return GraphResult([], [], limits, 0)
        anchors = await self._anchors(question, anchor_chunks, options)
        facts, reached = await self._expand(anchors, options)
        limits.extend(reached)
        grounding = await self._grounding(facts, options.chunks_per_fact, scope_filter)
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

    async def _anchors(self, question: str, anchor_chunks: list[str], options: GraphOptions) -> list[str]:
        """Element ids of anchor things, best first: those the top chunks mention, then names matching the question."""
        found: list[str] = []
        if anchor_chunks:
            rows, _ = await adb.cypher_query(
                f"UNWIND range(0, size($ids) - 1) AS position "
                f"MATCH (c:{self.chunk_label} {{{self.chunk_key}: $ids[position]}})<-[:{self.mention}]-(t) "
                "WITH t, min(position) AS first RETURN elementId(t) ORDER BY first, elementId(t) LIMIT $k",
                {"ids": anchor_chunks, "k": options.max_anchors},
            )
            found.extend(row[0] for row in rows)
        query = to_query(question)
        if query:
            rows, _ = await adb.cypher_query(
                "CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score "
                "RETURN elementId(node) ORDER BY score DESC, elementId(node)",
                {"index": self.names_index, "query": query, "k": options.max_anchors},
            )
            found.extend(row[0] for row in rows)
        return list(dict.fromkeys(found))[: options.max_anchors]

    async def _expand(self, anchors: list[str], options: GraphOptions) -> tuple[list[FactHit], list[Limit]]:
        limits: list[Limit] = []
        if not anchors:
            return [], limits
        # Hubs are neither anchors to expand from nor things to pass through.
        rows, _ = await adb.cypher_query(
            f"UNWIND $ids AS id MATCH (t) WHERE elementId(t) = id "
            f"RETURN id, COUNT {{ (t)-[:{self.fact_types}]-() }} AS degree",
            {"ids": anchors},
        )
        degree = {row[0]: int(row[1]) for row in rows}
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
            rows, _ = await adb.cypher_query(
                f"UNWIND range(0, size($frontier) - 1) AS position "
                f"MATCH (t) WHERE elementId(t) = $frontier[position] "
                f"MATCH (t)-[f:{self.fact_types}]-(other) "
                f"WITH f, other, min(position) AS origin, COUNT {{ (other)-[:{self.fact_types}]-() }} AS degree "
                "RETURN elementId(f), type(f), startNode(f).name, endNode(f).name, elementId(other), degree "
                "ORDER BY origin, type(f), elementId(f) LIMIT $limit",
                {"frontier": frontier, "limit": remaining + 1 + len(seen_facts)},
            )
            next_frontier: list[str] = []
            hub_skipped = False
            for element_id, fact_type, source, target, other, other_degree in rows:
                if element_id in seen_facts:
                    continue
                if len(facts) == options.max_facts:
                    limits.append(Limit(name=LimitName.MAX_FACTS, value=options.max_facts))
                    return facts, limits
                seen_facts.add(element_id)
                facts.append(FactHit(element_id, fact_type, source, target, hop))
                if other not in visited:
                    visited.add(other)
                    if int(other_degree) > options.max_degree:
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
        self, facts: list[FactHit], per_fact: int, scope_filter: tuple[str, dict[str, Any]] | None
    ) -> dict[str, list[str]]:
        """For each fact, the chunks (of documents that state it) mentioning both of its ends."""
        if not facts:
            return {}
        condition, params = scope_filter if scope_filter else ("true", {})
        rows, _ = await adb.cypher_query(
            f"UNWIND $ids AS id MATCH (a)-[f]->(b) WHERE elementId(f) = id "
            f"MATCH (a)-[:{self.mention}]->(c:{self.chunk_label})<-[:{self.mention}]-(b) "
            f"WHERE c.{self.chunk_document} IN f.documentIds AND {condition} "
            f"WITH id, c ORDER BY c.{self.chunk_key} "
            f"RETURN id, collect(DISTINCT c.{self.chunk_key})[..$perFact]",
            {"ids": [fact.element_id for fact in facts], "perFact": per_fact, **params},
        )
        found: dict[str, list[str]] = {row[0]: list(row[1]) for row in rows if row[1]}
        return found


def describe_facts(result: GraphResult) -> dict[str, Any]:
    """Counts for tracing: facts followed and candidates found."""
    return {"facts": result.facts, "candidates": len(result.candidates)}
