"""Knowledge writes inside the document's single transaction, with lock-then-read.

Before the document's previous chunks are deleted (:func:`retract_knowledge`): its
mentions and quotes go first, then the document leaves each fact that listed it, and a
fact left with no document is deleted. After its new chunks exist
(:meth:`KnowledgeWriter.write`): things are upserted by id, facts merged between them, and
mentions and quotes created by key. Both run every statement in the transaction they
are given (``tx``) and never open one of their own.

Concurrent runs never lose each other's document ids or aliases: each statement that
adds to a shared list first writes a no-op (``SET n += {}``), which takes the node's
write lock, and only then reads the stored list, so the union is computed from the
latest committed value. A stored thing keeps its name and description; only its aliases
grow. Names, aliases and quotes are parameters, never query text.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from graphrag_orm.extraction.grounding import DocumentKnowledge, ThingDraft
from graphrag_orm.extraction.statements import KnowledgeWriteStatements, retract_statements
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import (
    EXTRACTOR_VERSION,
    Ontology,
    fact_model,
    join_aliases,
    mention_key,
    quote_key,
    quote_model,
    split_aliases,
    tenant_thing_id,
)
from graphrag_orm.ontology.entities import Mention
from graphrag_orm.ontology.facts import take_documents_off_facts
from graphrag_orm.ontology.ontology import QUOTE_TYPES
from graphrag_orm.store import NodeWrites, Queries, StoredNames
from graphrag_orm.tenancy import Tenant, require_tenant

__all__ = ["KnowledgeWriter", "in_tenant", "retract_knowledge"]


def _row(cls: type[Any], values: dict[str, Any]) -> dict[str, Any]:
    """Stored names and deflated values of a relationship model's declared properties."""
    out: dict[str, Any] = {}
    for attribute, prop in cls.defined_properties(aliases=False, rels=False).items():
        value = values.get(attribute)
        out[prop.get_db_property_name(attribute)] = None if value is None else prop.deflate(value)
    return out


async def retract_knowledge(tx: Queries, names: StoredNames, document_id: str) -> dict[str, int]:
    """Take one document out of the knowledge graph, whatever ontology wrote it, in ``tx``.

    The toolkit's mentions and quotes are the incoming relationships of the document's
    chunks that carry a ``key`` and a ``runId``; the things they come from are the ends
    of every fact that can list the document. Each such fact (any relationship carrying
    ``documentIds``) has both ends locked, then its list read and rewritten without the
    document; a fact left with no document is deleted. Then the mentions and quotes go.
    Returns counts of ``mentions``, ``quotes``, ``facts_updated`` and ``facts_deleted``.
    """
    statements = retract_statements(names.chunk.label, names.chunk.stored("document_id"), names.tenanted)
    found = await tx.run(statements.fact_ids, {"document": document_id}, name="extraction.retract.facts")
    updated, deleted = await take_documents_off_facts(tx, found.column("fact"), [document_id], tenanted=names.tenanted)
    removed = await tx.run(
        statements.links,
        {"document": document_id, "quoteTypes": list(QUOTE_TYPES)},
        name="extraction.retract.links",
    )
    mentions, links = int(removed.value("mentions", 0)), int(removed.value("links", 0))
    return {"mentions": mentions, "quotes": links - mentions, "facts_updated": updated, "facts_deleted": deleted}


def in_tenant(knowledge: DocumentKnowledge, tenant: str) -> DocumentKnowledge:
    """``knowledge`` with every thing id (things, facts' ends, quotes' speakers) qualified by ``tenant``."""

    def own(thing_id: str) -> str:
        return tenant_thing_id(thing_id, tenant)

    things: dict[str, ThingDraft] = {}
    for thing in knowledge.things.values():
        things[own(thing.id)] = replace(
            thing, id=own(thing.id), aliases=set(thing.aliases), mentions=list(thing.mentions)
        )
    facts = {
        (fact.type, own(fact.source), own(fact.target)): replace(fact, source=own(fact.source), target=own(fact.target))
        for fact in knowledge.facts.values()
    }
    quotes = [replace(quote, speaker=own(quote.speaker)) for quote in knowledge.quotes]
    return replace(knowledge, things=things, facts=facts, quotes=quotes)


class KnowledgeWriter:
    """Writes and retracts one document's things, facts, mentions and quotes."""

    def __init__(self, model: LexicalModel, ontology: Ontology) -> None:
        self.model = model
        self.ontology = ontology
        self.names = model.names
        self.statements = KnowledgeWriteStatements.render(self.names, ontology)

    async def retract(self, tx: Queries, document_id: str) -> dict[str, int]:
        """Remove the document's mentions and quotes and take it off its facts, in ``tx``.

        Type-agnostic on purpose: a document extracted under another ontology, another
        storage shape, or before extraction was turned off, is retracted all the same, so
        a changed ontology never strands a document. See :func:`retract_knowledge`.
        """
        return await retract_knowledge(tx, self.names, document_id)

    async def write(
        self, tx: Queries, document_id: str, knowledge: DocumentKnowledge, run_id: str, tenant: Tenant | None = None
    ) -> None:
        """Upsert things, merge facts, create mentions and quotes, in ``tx``.

        In a tenanted layout ``tenant`` is the store's (``tenant-required`` without one): every
        thing id is qualified by it (:func:`~graphrag_orm.ontology.tenant_thing_id`), so two
        tenants naming the same thing hold two things, and every statement writes and matches
        the tenant's nodes only (``$tenant``).
        """
        if not knowledge.things:
            return
        if self.names.tenanted:
            require_tenant(True, tenant, "knowledge extraction")
            assert tenant is not None
            knowledge = in_tenant(knowledge, tenant.value)
        await self._things(tx, knowledge, run_id)
        await self._facts(tx, document_id, knowledge, run_id)
        await self._mentions(tx, document_id, knowledge, run_id)
        await self._quotes(tx, document_id, knowledge, run_id)

    async def _things(self, tx: Queries, knowledge: DocumentKnowledge, run_id: str) -> None:
        by_kind: dict[str, list[Any]] = defaultdict(list)
        for thing in sorted(knowledge.things.values(), key=lambda t: t.id):
            by_kind[thing.kind].append(thing)
        # Every transaction locks things in one global order (ontology kinds, then ids),
        # so concurrent documents sharing things do not deadlock.
        for kind in self.ontology.kinds:
            things = by_kind.get(kind)
            if not things:
                continue
            cls = self.ontology.class_of(kind)
            assert cls is not None
            writes = NodeWrites(cls)
            rows = [
                {
                    "id": thing.id,
                    "props": writes.row(
                        {
                            "uid": thing.id,
                            "name": thing.name,
                            "aliases": join_aliases(thing.aliases),
                            "description": thing.description,
                            "is_placeholder": thing.is_placeholder,
                            "run_id": run_id,
                            "extractor_version": EXTRACTOR_VERSION,
                        }
                    ),
                    "aliases": sorted(thing.aliases),
                }
                for thing in things
            ]
            # Upsert and lock in one statement; the stored aliases are read after the lock.
            stored = await tx.run(self.statements.things[kind], {"rows": rows}, name="extraction.things.upsert")
            current = {row["id"]: row["aliases"] for row in stored}
            updates = []
            for row in rows:
                merged = join_aliases(set(split_aliases(current.get(row["id"]))) | set(row["aliases"]))
                if merged != current.get(row["id"]):
                    updates.append({"id": row["id"], "aliases": merged})
            if updates:
                await tx.run(self.statements.aliases[kind], {"rows": updates}, name="extraction.things.aliases")

    async def _facts(self, tx: Queries, document_id: str, knowledge: DocumentKnowledge, run_id: str) -> None:
        groups: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
        for fact in sorted(knowledge.facts.values(), key=lambda f: (f.type, f.source, f.target)):
            groups[(fact.source_kind, fact.type, fact.target_kind)].append(fact)
        for triple, facts in sorted(groups.items()):
            model = fact_model(triple[1])
            rows = [
                {
                    "source": fact.source,
                    "target": fact.target,
                    "props": _row(
                        model,
                        {
                            "document_ids": [document_id],
                            "run_id": run_id,
                            "extractor_version": EXTRACTOR_VERSION,
                            **{k: v for k, v in fact.payload.items() if k in ("role", "kind", "description")},
                        },
                    ),
                }
                for fact in facts
            ]
            await tx.run(
                self.statements.facts[triple], {"rows": rows, "document": document_id}, name="extraction.facts.merge"
            )

    async def _mentions(self, tx: Queries, document_id: str, knowledge: DocumentKnowledge, run_id: str) -> None:
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        keys: set[str] = set()
        for thing in knowledge.things.values():
            for span in thing.mentions:
                key = mention_key(span.chunk_id, span.start_byte, thing.id)
                if key in keys:
                    continue
                keys.add(key)
                props = {
                    "key": key,
                    "document_id": document_id,
                    "start_byte": span.start_byte,
                    "end_byte": span.end_byte,
                    "quote": span.quote,
                    "run_id": run_id,
                    "extractor_version": EXTRACTOR_VERSION,
                }
                by_kind[thing.kind].append({"thing": thing.id, "chunk": span.chunk_id, "props": _row(Mention, props)})
        for kind, rows in by_kind.items():
            await tx.run(self.statements.mentions[kind], {"rows": rows}, name="extraction.mentions.create")

    async def _quotes(self, tx: Queries, document_id: str, knowledge: DocumentKnowledge, run_id: str) -> None:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        keys: set[str] = set()
        for quote in knowledge.quotes:
            key = quote_key(quote.span.chunk_id, quote.span.start_byte, quote.speaker)
            if key in keys:
                continue
            keys.add(key)
            props = {
                "key": key,
                "document_id": document_id,
                "start_byte": quote.span.start_byte,
                "end_byte": quote.span.end_byte,
                "quote": quote.span.quote,
                "addressee": quote.addressee,
                "run_id": run_id,
                "extractor_version": EXTRACTOR_VERSION,
            }
            groups[(quote.type, quote.speaker_kind)].append(
                {"speaker": quote.speaker, "chunk": quote.span.chunk_id, "props": _row(quote_model(quote.type), props)}
            )
        for pair, rows in groups.items():
            await tx.run(self.statements.quotes[pair], {"rows": rows}, name="extraction.quotes.create")
