"""Reads of the knowledge graph grounded extraction wrote: things by name, a thing's facts.

Both read inside a resolved scope when given one: a thing is found only when a chunk
inside the scope mentions it; a fact is kept only when a whole document of the scope
states it, or a chunk inside the scope (of a document that states it) mentions both its
ends, and its documents are cut to the scope's. Reads only; every value is a parameter.
"""

from __future__ import annotations

from typing import Any

from graphrag_orm.codes import LimitName
from graphrag_orm.knowledge.statements import KnowledgeReadStatements
from graphrag_orm.knowledge.values import FactFound, FactsFound, ThingFound, ThingsFound
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology, split_aliases
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.store import Store
from graphrag_orm.tenancy import check_fenced
from graphrag_orm.values import Limit

__all__ = ["KnowledgeReads"]


class KnowledgeReads:
    """Things and facts of one layout and ontology, through ``store``."""

    def __init__(self, store: Store, model: LexicalModel, ontology: Ontology) -> None:
        # A tenanted graph's reads are the tenant's (``$tenant`` in each statement, docs/tenancy.md).
        check_fenced(model.layout.tenanted, store.tenanted, "the knowledge reads")
        self.store = store
        self.ontology = ontology
        self.statements = KnowledgeReadStatements.of(model, ontology)

    async def find_things(
        self,
        name: str,
        *,
        kind: str | None = None,
        scope: ResolvedScope | None = None,
        candidates: int,
        max_things: int,
    ) -> ThingsFound:
        """Things whose name or alias matches ``name`` (of ``kind`` when given), best first.

        The index is asked for ``candidates``; at most ``max_things`` are kept, and
        ``MaxItems`` is reported when either bound was reached.
        """
        query = to_query(name)
        if not query or (scope is not None and scope.empty):
            return ThingsFound()
        ontology, st = self.ontology, self.statements
        wanted = ontology.label_of(kind) if kind is not None else None
        result = await self.store.read(
            st.things(scoped=scope is not None),
            {"index": st.names_index, "query": query, "candidates": candidates, **_parameters(scope)},
            name="knowledge.things",
        )
        kept: list[ThingFound] = []
        for row in result:
            labels = list(row["labels"] or [])
            found_kind = _kind_of(ontology, labels)
            if not row["inScope"] or found_kind is None or row["id"] is None:
                continue
            if wanted is not None and wanted not in labels:
                continue
            kept.append(
                ThingFound(
                    thing_id=row["id"],
                    kind=kind if kind is not None else found_kind,
                    name=row["name"] or "",
                    aliases=tuple(split_aliases(row["aliases"])),
                    description=row["description"],
                    score=float(row["score"]),
                )
            )
        limits: list[Limit] = []
        if len(kept) > max_things:
            kept = kept[:max_things]
            limits.append(Limit(name=LimitName.MAX_ITEMS, value=max_things))
        elif len(result) >= candidates:
            # The index had more hits than were read; the kind or scope filter left fewer than asked.
            limits.append(Limit(name=LimitName.MAX_ITEMS, value=candidates))
        return ThingsFound(things=tuple(kept), limits_reached=tuple(limits))

    async def related_facts(self, thing_id: str, *, scope: ResolvedScope | None = None, limit: int) -> FactsFound:
        """At most ``limit`` facts touching ``thing_id`` (``MaxFacts`` when there were more)."""
        st = self.statements
        result = await self.store.read(
            st.facts(scoped=scope is not None),
            {"id": thing_id, "limit": limit + 1, **_parameters(scope)},
            name="knowledge.facts",
        )
        row = result.single()
        if row is None:
            return FactsFound(thing_id=thing_id, found=False)
        facts: list[FactFound] = []
        for fact in row["facts"] or []:
            documents = tuple(sorted(fact["documentIds"] or []))
            if scope is not None:
                documents = tuple(d for d in documents if d in scope.ranges)
            facts.append(
                FactFound(
                    type=fact["type"],
                    source_id=fact["source"],
                    source_name=fact["sourceName"] or "",
                    target_id=fact["target"],
                    target_name=fact["targetName"] or "",
                    document_ids=documents,
                )
            )
        limits: tuple[Limit, ...] = ()
        if len(facts) > limit:
            facts = facts[:limit]
            limits = (Limit(name=LimitName.MAX_FACTS, value=limit),)
        return FactsFound(thing_id=thing_id, found=True, facts=tuple(facts), limits_reached=limits)


def _kind_of(ontology: Ontology, labels: list[str]) -> str | None:
    """The most specific kind whose label the node holds (a subclass also holds its ancestors' labels)."""
    matching = [kind for kind in ontology.kinds if ontology.label_of(kind) in labels]
    if not matching:
        return None
    return max(matching, key=lambda kind: len(ontology.labels_of(kind)))


def _parameters(scope: ResolvedScope | None) -> dict[str, Any]:
    return scope.parameters if scope is not None else {}
