"""Knowledge writes inside the document's single transaction, with lock-then-read.

Before the document's previous chunks are deleted (:meth:`KnowledgeWriter.retract`): its
mentions and quotes go first, then the document leaves each fact that listed it, and a
fact left with no document is deleted. After its new chunks exist
(:meth:`KnowledgeWriter.write`): things are upserted by id, facts merged between them, and
mentions and quotes created by key.

Concurrent runs never lose each other's document ids or aliases: each statement that
adds to a shared list first writes a no-op (``SET n += {}``), which takes the node's
write lock, and only then reads the stored list, so the union is computed from the
latest committed value. A stored thing keeps its name and description; only its aliases
grow. Names, aliases and quotes are parameters, never query text.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from neomodel import adb

from graphrag_orm.extraction.grounding import DocumentKnowledge
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
)
from graphrag_orm.ontology.entities import Entity, Mention
from graphrag_orm.ontology.facts import take_documents_off_facts
from graphrag_orm.ontology.ontology import QUOTE_TYPES
from graphrag_orm.store.batches import NodeWrites


def _stored(cls: type[Any]) -> dict[str, tuple[str, Any]]:
    return {
        attribute: (prop.get_db_property_name(attribute), prop)
        for attribute, prop in cls.defined_properties(aliases=False, rels=False).items()
    }


def _row(cls: type[Any], values: dict[str, Any]) -> dict[str, Any]:
    """Stored names and deflated values of a relationship model's declared properties."""
    out: dict[str, Any] = {}
    for attribute, (db_name, prop) in _stored(cls).items():
        value = values.get(attribute)
        out[db_name] = None if value is None else prop.deflate(value)
    return out


async def retract_knowledge(chunk_label: str, chunk_document: str, document_id: str) -> dict[str, int]:
    """Take one document out of the knowledge graph, whatever ontology wrote it.

    The toolkit's mentions and quotes are the incoming relationships of the document's
    chunks that carry a ``key`` and a ``runId``; the things they come from are the ends
    of every fact that can list the document. Each such fact (any relationship carrying
    ``documentIds``) has both ends locked, then its list read and rewritten without the
    document; a fact left with no document is deleted. Then the mentions and quotes go.
    """
    counts = {"mentions": 0, "quotes": 0, "facts_updated": 0, "facts_deleted": 0}
    chunk = f"(c:{chunk_label} {{{chunk_document}: $document}})"
    rows, _ = await adb.cypher_query(
        f"MATCH {chunk}<-[m]-(t) WHERE m.key IS NOT NULL AND m.runId IS NOT NULL WITH DISTINCT t "
        "MATCH (t)-[f]-() WHERE f.documentIds IS NOT NULL AND $document IN f.documentIds "
        "RETURN DISTINCT elementId(f)",
        {"document": document_id},
    )
    updated, deleted = await take_documents_off_facts([row[0] for row in rows], [document_id])
    counts["facts_updated"], counts["facts_deleted"] = updated, deleted
    rows, _ = await adb.cypher_query(
        f"MATCH {chunk}<-[r]-() WHERE r.key IS NOT NULL AND r.runId IS NOT NULL "
        "WITH r, NOT type(r) IN $quoteTypes AS isMention "
        "DELETE r RETURN sum(CASE WHEN isMention THEN 1 ELSE 0 END), count(*)",
        {"document": document_id, "quoteTypes": list(QUOTE_TYPES)},
    )
    mentions, total = int(rows[0][0] or 0), int(rows[0][1] or 0)
    counts["mentions"] = mentions
    counts["quotes"] = total - mentions
    return counts


class KnowledgeWriter:
    """Writes and retracts one document's things, facts, mentions and quotes."""

    def __init__(self, model: LexicalModel, ontology: Ontology) -> None:
        self.model = model
        self.ontology = ontology
        chunks = NodeWrites(model.chunk)
        self.chunk_label, self.chunk_key, self.chunk_document = chunks.label, chunks.key, chunks.stored("document_id")
        self.mention_type = ontology.mention_type
        self.quote_types = ontology.quote_types
        self.fact_types = ontology.fact_types
        entity_props = _stored(Entity)
        self.thing_key = entity_props["uid"][0]
        self.aliases_property = entity_props["aliases"][0]

    # ------------------------------------------------------------ retract

    async def retract(self, document_id: str) -> dict[str, int]:
        """Remove the document's mentions and quotes and take it off its facts (in the open transaction).

        Type-agnostic on purpose: a document extracted under another ontology, another
        storage shape, or before extraction was turned off, is retracted all the same, so
        a changed ontology never strands a document. See :func:`retract_knowledge`.
        """
        return await retract_knowledge(self.chunk_label, self.chunk_document, document_id)

    # -------------------------------------------------------------- write

    async def write(self, document_id: str, knowledge: DocumentKnowledge, run_id: str) -> None:
        """Upsert things, merge facts, create mentions and quotes (in the open transaction)."""
        if not knowledge.things:
            return
        await self._things(knowledge, run_id)
        await self._facts(document_id, knowledge, run_id)
        await self._mentions(document_id, knowledge, run_id)
        await self._quotes(document_id, knowledge, run_id)

    async def _things(self, knowledge: DocumentKnowledge, run_id: str) -> None:
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
            labels = ":".join(self.ontology.labels_of(kind))
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
            own = self.ontology.label_of(kind)
            # Upsert and lock in one statement; the stored aliases are read after the lock.
            stored, _ = await adb.cypher_query(
                f"UNWIND $rows AS row MERGE (e:{own} {{{self.thing_key}: row.id}}) "
                f"ON CREATE SET e += row.props SET e:{labels}, e += {{}} "
                f"RETURN e.{self.thing_key}, e.{self.aliases_property}",
                {"rows": rows},
            )
            current = {row[0]: row[1] for row in stored}
            updates = []
            for row in rows:
                merged = join_aliases(set(split_aliases(current.get(row["id"]))) | set(row["aliases"]))
                if merged != current.get(row["id"]):
                    updates.append({"id": row["id"], "aliases": merged})
            if updates:
                await adb.cypher_query(
                    f"UNWIND $rows AS row MATCH (e:{own} {{{self.thing_key}: row.id}}) "
                    f"SET e.{self.aliases_property} = row.aliases",
                    {"rows": updates},
                )

    async def _facts(self, document_id: str, knowledge: DocumentKnowledge, run_id: str) -> None:
        groups: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
        for fact in sorted(knowledge.facts.values(), key=lambda f: (f.type, f.source, f.target)):
            groups[(fact.source_kind, fact.type, fact.target_kind)].append(fact)
        for (source_kind, fact_type, target_kind), facts in sorted(groups.items()):
            model = fact_model(fact_type)
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
            source_label = self.ontology.label_of(source_kind)
            target_label = self.ontology.label_of(target_kind)
            # ON MATCH SET takes the fact's write lock before it reads documentIds, so
            # concurrent runs adding one fact from different documents keep both ids.
            # The first writer's payload stays.
            await adb.cypher_query(
                f"UNWIND $rows AS row MATCH (a:{source_label} {{{self.thing_key}: row.source}}) "
                f"MATCH (b:{target_label} {{{self.thing_key}: row.target}}) "
                f"MERGE (a)-[f:{fact_type}]->(b) ON CREATE SET f += row.props "
                "ON MATCH SET f.documentIds = CASE WHEN $document IN f.documentIds THEN f.documentIds "
                "ELSE coll.sort(f.documentIds + $document) END",
                {"rows": rows, "document": document_id},
            )

    async def _mentions(self, document_id: str, knowledge: DocumentKnowledge, run_id: str) -> None:
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        keys: set[str] = set()
        for thing in knowledge.things.values():
            for span in thing.mentions:
                key = mention_key(span.chunk_id, span.start_byte, thing.id)
                if key in keys:
                    continue
                keys.add(key)
                by_kind[thing.kind].append(
                    {
                        "thing": thing.id,
                        "chunk": span.chunk_id,
                        "props": _row(
                            Mention,
                            {
                                "key": key,
                                "document_id": document_id,
                                "start_byte": span.start_byte,
                                "end_byte": span.end_byte,
                                "quote": span.quote,
                                "run_id": run_id,
                                "extractor_version": EXTRACTOR_VERSION,
                            },
                        ),
                    }
                )
        for kind, rows in by_kind.items():
            await adb.cypher_query(
                f"UNWIND $rows AS row MATCH (t:{self.ontology.label_of(kind)} {{{self.thing_key}: row.thing}}) "
                f"MATCH (c:{self.chunk_label} {{{self.chunk_key}: row.chunk}}) "
                f"CREATE (t)-[m:{self.mention_type}]->(c) SET m = row.props",
                {"rows": rows},
            )

    async def _quotes(self, document_id: str, knowledge: DocumentKnowledge, run_id: str) -> None:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        keys: set[str] = set()
        for quote in knowledge.quotes:
            key = quote_key(quote.span.chunk_id, quote.span.start_byte, quote.speaker)
            if key in keys:
                continue
            keys.add(key)
            model = quote_model(quote.type)
            groups[(quote.type, quote.speaker_kind)].append(
                {
                    "speaker": quote.speaker,
                    "chunk": quote.span.chunk_id,
                    "props": _row(
                        model,
                        {
                            "key": key,
                            "document_id": document_id,
                            "start_byte": quote.span.start_byte,
                            "end_byte": quote.span.end_byte,
                            "quote": quote.span.quote,
                            "addressee": quote.addressee,
                            "run_id": run_id,
                            "extractor_version": EXTRACTOR_VERSION,
                        },
                    ),
                }
            )
        for (quote_type, kind), rows in groups.items():
            await adb.cypher_query(
                f"UNWIND $rows AS row MATCH (t:{self.ontology.label_of(kind)} {{{self.thing_key}: row.speaker}}) "
                f"MATCH (c:{self.chunk_label} {{{self.chunk_key}: row.chunk}}) "
                f"CREATE (t)-[q:{quote_type}]->(c) SET q = row.props",
                {"rows": rows},
            )
