"""Extraction write throughput: facts per second through ingestion with an ontology, against a floor.

Generates a deterministic corpus (300 plain-text documents by default) in which every
paragraph states four facts among 400 things of the generic ontology (people,
organizations, places, events, concepts), drawn Zipf-weighted from a pool of 1,500
facts, so most facts are stated by several documents. The chunker (512 bytes, no
overlap) packs about two paragraphs per chunk. Then it writes the corpus two ways, in
interleaved rounds (three by default), each on a fresh database (data deleted, indexes
dropped and re-created from the toolkit's chain and the ontology's schema); the best
round of each counts:

- **graphrag-orm**: ``IngestionService.ingest`` with ``Extractor(generic.ONTOLOGY,
  ScriptedChat)``. The scripted chat answers each chunk at once from a table made
  before the timing, so no model latency is measured; everything else is: loading,
  chunking, hashing embeddings, reading the reply, the checks, grounding every mention,
  resolution, and one transaction per document (lease, lexical writes, knowledge
  writes with lock-then-read).
- **floor**: hand-written UNWIND statements writing the same document, chunks (with the
  same vectors, computed the same way inside the timing), edges, things, facts with the
  same sorted ``documentIds`` lists, and mentions with the same keys and spans, in one
  transaction per document at the same document concurrency. It takes each chunk's
  facts from the same table, locates names with ``str.find`` and writes each fact with
  one ``MERGE ... ON MATCH SET f.documentIds = coll.sort(...)`` (Cypher locks the
  relationship before it reads the list, so concurrent documents lose no ids). Then
  the two graphs are compared, and must be identical but for run ids and timestamps.

Facts per second counts fact assertions: for each document, the distinct facts it
states (what ``ExtractionSummary.facts`` counts), over the wall time of the whole run.

    .venv/bin/python benchmarks/extraction/run.py
    .venv/bin/python benchmarks/extraction/run.py --documents 60     # a quick look

It starts its own local Neo4j (``tools/neo4j/home-bench-7698``, port 7698) and stops it
at the end if it started it. ``--uri`` names another server instead: it is wiped.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import random
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import neo4j
from common import (
    BenchServer,
    LoadProbe,
    LoadReport,
    StatementCounter,
    floor_chunk_rows,
    machine_description,
    print_table,
    reset_database,
    server_version,
)
from neo4j import exceptions as neo4j_errors

from graphrag_orm.chat import ChatRequest, ScriptedChat
from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.extraction import Extractor, KnowledgeWriter
from graphrag_orm.ingestion import DocumentStatus, IngestionOptions, IngestionService, settings_fingerprint
from graphrag_orm.layout import Layout
from graphrag_orm.loaders.base import LoadedDocument
from graphrag_orm.models import for_layout
from graphrag_orm.ontologies import generic
from graphrag_orm.ontology import EXTRACTOR_VERSION, entity_id, mention_key
from graphrag_orm.retry import RetryPolicy
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import open_driver

BENCH_PORT = 7698
BENCH_HOME = "home-bench-7698"
ONTOLOGY = generic.ONTOLOGY
CHUNKER_OPTIONS = ChunkerOptions(max_utf8_bytes=512, overlap_paragraphs=0)

# ------------------------------------------------------------------ the corpus

KIND_COUNTS = {"Person": 160, "Organization": 90, "Place": 80, "Event": 40, "Concept": 30}
ORGANIZATION_ENDINGS = ("Freight", "Works", "Guild", "Bank", "Press", "Foundry", "Trust", "Lines")
CONCEPT_ENDINGS = ("logistics", "weaving", "theory", "surveying", "brewing", "navigation")
# One sentence per allowed (source, type, target) the corpus states; names are written as is.
TEMPLATES: dict[tuple[str, str, str], str] = {
    ("Person", "WORKS_FOR", "Organization"): "{a} works for {b}.",
    ("Person", "MEMBER_OF", "Organization"): "{a} is a member of {b}.",
    ("Person", "PARTICIPATES_IN", "Event"): "{a} took part in the {b}.",
    ("Organization", "PARTICIPATES_IN", "Event"): "{a} sent a team to the {b}.",
    ("Person", "LOCATED_IN", "Place"): "{a} lives in {b}.",
    ("Organization", "LOCATED_IN", "Place"): "{a} is based in {b}.",
    ("Event", "LOCATED_IN", "Place"): "The {a} was held in {b}.",
    ("Place", "LOCATED_IN", "Place"): "{a} lies within {b}.",
    ("Organization", "PART_OF", "Organization"): "{a} is part of {b}.",
    ("Place", "PART_OF", "Place"): "{a} is a district of {b}.",
    ("Person", "RELATED_TO", "Concept"): "{a} is known for {b}.",
    ("Organization", "RELATED_TO", "Concept"): "{a} invests in {b}.",
}
_ONSETS = ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "st", "tr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
_CODAS = ["", "", "n", "r", "s", "l", "t", "x", "nd", "rk"]


@dataclass(frozen=True)
class Thing:
    kind: str
    name: str

    @property
    def id(self) -> str:
        return entity_id(self.kind, self.name)


@dataclass(frozen=True)
class Fact:
    source: Thing
    type: str
    target: Thing


@dataclass
class Corpus:
    """Documents as (text source id, text), and the facts each paragraph states."""

    seed: int
    documents: list[tuple[str, str]]
    facts: list[Fact]
    paragraphs: dict[str, tuple[int, ...]] = field(repr=False)

    @property
    def utf8_bytes(self) -> int:
        return sum(len(text.encode("utf-8")) for _, text in self.documents)

    def facts_in(self, passage: str) -> list[int]:
        """The facts a passage states: those of every whole paragraph in it, in order."""
        return [i for paragraph in passage.split("\n\n") for i in self.paragraphs.get(paragraph.strip(), ())]


def generate_corpus(seed: int, documents: int, paragraphs: int = 6, per_paragraph: int = 4) -> Corpus:
    """The same bytes and facts for the same arguments."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < 600:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(rng.randint(2, 3)))
        if 4 <= len(word) <= 12:
            words.add(word.capitalize())
    pool = sorted(words)
    rng.shuffle(pool)
    things: dict[str, list[Thing]] = {kind: [] for kind in KIND_COUNTS}
    for kind, count in KIND_COUNTS.items():
        for _ in range(count):
            word = pool.pop()
            if kind == "Person":
                name = f"{word} {pool.pop()}"
            elif kind == "Organization":
                name = f"{word} {rng.choice(ORGANIZATION_ENDINGS)}"
            elif kind == "Event":
                name = f"{word} Fair"
            elif kind == "Concept":
                name = f"{word.lower()} {rng.choice(CONCEPT_ENDINGS)}"
            else:
                name = word
            things[kind].append(Thing(kind, name))
    facts: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()
    patterns = sorted(TEMPLATES)
    while len(facts) < 1_500:
        source_kind, fact_type, target_kind = rng.choice(patterns)
        source, target = rng.choice(things[source_kind]), rng.choice(things[target_kind])
        key = (source.id, fact_type, target.id)
        if source != target and key not in seen:
            seen.add(key)
            facts.append(Fact(source, fact_type, target))
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(facts))]
    table: dict[str, tuple[int, ...]] = {}
    out: list[tuple[str, str]] = []
    for number in range(documents):
        parts: list[str] = []
        for _ in range(paragraphs):
            chosen: list[int] = []
            while len(chosen) < per_paragraph:
                index = rng.choices(range(len(facts)), weights=weights)[0]
                if index not in chosen:
                    chosen.append(index)
            text = " ".join(
                TEMPLATES[(facts[i].source.kind, facts[i].type, facts[i].target.kind)].format(
                    a=facts[i].source.name, b=facts[i].target.name
                )
                for i in chosen
            )
            table[text] = tuple(chosen)
            parts.append(text)
        out.append((f"bench/doc-{number:04d}", "\n\n".join(parts) + "\n"))
    return Corpus(seed, out, facts, table)


def chunk_texts(text: str, chunker: Chunker) -> list[str]:
    loaded = LoadedDocument(source_uri="text:plan", media_type="text/plain", utf8=text.encode("utf-8"))
    plan = chunker.plan(loaded)
    return plan.texts(loaded.utf8)


def reply_for(corpus: Corpus, facts: list[int]) -> str:
    """What a careful model replies for a passage stating ``facts``: each thing once, each fact once."""
    things: dict[Thing, None] = {}
    relationships: list[dict[str, Any]] = []
    for index in dict.fromkeys(facts):
        fact = corpus.facts[index]
        things.setdefault(fact.source)
        things.setdefault(fact.target)
        relationships.append(
            {
                "type": fact.type,
                "source": fact.source.name,
                "target": fact.target.name,
                "role": None,
                "kind": None,
                "description": None,
            }
        )
    entities = [
        {"kind": t.kind, "name": t.name, "aliases": [], "description": None, "mentions": [t.name]} for t in things
    ]
    return json.dumps({"entities": entities, "relationships": relationships})


def fact_assertions(corpus: Corpus, chunker: Chunker) -> int:
    """The distinct facts each document states, summed (what ``ExtractionSummary.facts`` adds up)."""
    total = 0
    for _, text in corpus.documents:
        total += len({corpus.facts[i] for passage in chunk_texts(text, chunker) for i in corpus.facts_in(passage)})
    return total


def scripted_replies(corpus: Corpus, chunker: Chunker) -> dict[str, str]:
    """Every chunk's reply, keyed by its text (made before the timing)."""
    replies: dict[str, str] = {}
    for _, text in corpus.documents:
        for passage in chunk_texts(text, chunker):
            replies.setdefault(passage, reply_for(corpus, corpus.facts_in(passage)))
    return replies


# ------------------------------------------------------------------ the server and the schema


# ------------------------------------------------------------------ contenders


@dataclass
class Outcome:
    name: str
    seconds: float
    documents: int
    chunks: int
    facts: int
    write_retries: int
    statements: int
    load: LoadReport | None = None
    failed_then_ingested: int = 0

    @property
    def facts_per_second(self) -> float:
        return self.facts / self.seconds if self.seconds else 0.0


def our_service(
    store: Store, replies: dict[str, str], write_attempts: int = 10, in_flight: int = 4
) -> IngestionService:
    """Wired as the facade wires it: one retry policy, the ontology's knowledge writer."""

    def respond(request: ChatRequest) -> str:
        return replies[request.messages[1].content.removeprefix("Passage:\n")]

    model = for_layout(Layout.DEFAULT)
    retry = RetryPolicy()
    return IngestionService(
        store,
        model,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(CHUNKER_OPTIONS),
        options=IngestionOptions(write_attempts=write_attempts, documents_in_flight=in_flight),
        retry=retry,
        extractor=Extractor(ONTOLOGY, ScriptedChat(respond), retry=retry),
        knowledge=KnowledgeWriter(model, ONTOLOGY),
    )


# Statements of a document's write transaction, by name (graphrag_orm.ingestion.statements,
# graphrag_orm.extraction.statements and graphrag_orm.ontology.facts).
IN_TRANSACTION = ("ingestion.document.", "extraction.", "ontology.")


def _is_transient(error_type: str) -> bool:
    found = getattr(neo4j_errors, error_type, None)
    return isinstance(found, type) and issubclass(found, neo4j_errors.TransientError)


async def ingest_ours(
    store: Store, corpus: Corpus, replies: dict[str, str], write_attempts: int, in_flight: int
) -> Outcome:
    """Ingest the corpus; a document that fails is ingested again by a further call, as a user would.

    Statements and retried transactions are counted through the store's hook: each
    statement of a document's transaction that failed with a transient error (a
    deadlock) is one failed attempt of that transaction, which the store runs again up
    to ``write_attempts`` tries in all (a last failure fails the document).
    """
    service = our_service(store, replies, write_attempts, in_flight)
    pending = [Sources.text(name, text) for name, text in corpus.documents]
    calls = failed = chunks = 0
    counter = StatementCounter(store)
    with counter:
        began = time.perf_counter()
        while pending and calls < 3:
            calls += 1
            receipt = await service.ingest(pending)
            assert receipt.extraction is not None
            if receipt.extraction.pruned or receipt.extraction.quarantined or receipt.unchanged:
                raise SystemExit("graphrag-orm pruned, quarantined or skipped items: the table is wrong")
            chunks += receipt.chunks_written
            still = [s for s, o in zip(pending, receipt.documents, strict=True) if o.status == DocumentStatus.FAILED]
            codes = Counter(o.error_code for o in receipt.documents if o.error_code)
            if still:
                print(f"  graphrag-orm: ingest call {calls}: {len(still)} failed {dict(codes)}; ingesting them again")
            failed += len(still)
            pending = still
        seconds = time.perf_counter() - began
    statements = counter.total(*IN_TRANSACTION)
    retries = sum(
        n for (name, error), n in counter.failed.items() if name.startswith(IN_TRANSACTION) and _is_transient(error)
    )
    if pending:
        raise SystemExit(f"graphrag-orm: {len(pending)} documents still failed after {calls} calls")
    # The receipt's summary also counts what a failed document extracted before its write
    # failed, so the facts written are counted from the table, as the floor counts them.
    facts = fact_assertions(corpus, Chunker(CHUNKER_OPTIONS))
    return Outcome("graphrag-orm", seconds, len(corpus.documents), chunks, facts, retries, statements, None, failed)


FLOOR_DOCUMENT = "CREATE (d:Document) SET d = $row"
FLOOR_CHUNKS = (
    "MATCH (d:Document {id: $document}) UNWIND $rows AS row CREATE (c:Chunk) SET c = row "
    "CREATE (c)-[:IN_DOCUMENT {runId: $run}]->(d)"
)
FLOOR_NEXT = (
    "UNWIND $pairs AS pair MATCH (a:Chunk {id: pair[0]}) MATCH (b:Chunk {id: pair[1]}) "
    "CREATE (a)-[:NEXT_CHUNK {runId: $run}]->(b)"
)
FLOOR_THINGS = "UNWIND $rows AS row MERGE (e:{label} {{id: row.id}}) ON CREATE SET e += row"
FLOOR_FACTS = (
    "UNWIND $rows AS row MATCH (a:{source} {{id: row.a}}) MATCH (b:{target} {{id: row.b}}) "
    "MERGE (a)-[f:{type}]->(b) "
    "ON CREATE SET f.documentIds = [$document], f.runId = $run, f.extractorVersion = $version "
    "ON MATCH SET f.documentIds = CASE WHEN $document IN f.documentIds THEN f.documentIds "
    "ELSE coll.sort(f.documentIds + $document) END"
)
FLOOR_MENTIONS = (
    "UNWIND $rows AS row MATCH (t:{label} {{id: row.thing}}) MATCH (c:Chunk {{id: row.chunk}}) "
    "CREATE (t)-[m:MENTIONED_IN]->(c) SET m = row.props"
)
FLOOR_RUN = "CREATE (r:IngestionRun) SET r = $row, r.startedAt = $started, r.completedAt = datetime()"


@dataclass
class FloorRows:
    document: dict[str, Any]
    chunks: list[dict[str, Any]]
    pairs: list[list[str]]
    things: dict[str, list[dict[str, Any]]]
    facts: dict[tuple[str, str, str], list[dict[str, str]]]
    mentions: dict[str, list[dict[str, Any]]]
    fact_count: int


async def floor_rows(
    corpus: Corpus, name: str, text: str, chunker: Chunker, embedder: HashingEmbedder, fingerprint: str, run: str
) -> FloorRows:
    """Chunk and embed one document and build its rows: the same values ours writes."""
    source = Sources.text(name, text)
    doc = source.document_id
    loaded = LoadedDocument(source_uri=source.source_uri, media_type="text/plain", utf8=text.encode("utf-8"))
    plan = chunker.plan(loaded)
    texts = plan.texts(loaded.utf8)
    vectors = await embedder.embed(texts)
    document = {
        "id": doc,
        "sourceUri": source.source_uri,
        "mediaType": loaded.media_type,
        "contentHash": loaded.content_hash,
        "lengthBytes": loaded.length_bytes,
        "settingsFingerprint": fingerprint,
        "ingestedAt": datetime.now(UTC),
        "runId": run,
    }
    chunks = floor_chunk_rows(doc, loaded.content_hash, plan, texts, vectors, run)
    ids = [row["id"] for row in chunks]
    things: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in KIND_COUNTS}
    facts: dict[tuple[str, str, str], dict[tuple[str, str], dict[str, str]]] = {}
    mentions: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KIND_COUNTS}
    for i, passage in enumerate(texts):
        located: set[str] = set()
        for index in corpus.facts_in(passage):
            fact = corpus.facts[index]
            for thing in (fact.source, fact.target):
                things[thing.kind].setdefault(
                    thing.id,
                    {
                        "id": thing.id,
                        "name": thing.name,
                        "isPlaceholder": False,
                        "runId": run,
                        "extractorVersion": EXTRACTOR_VERSION,
                    },
                )
                if thing.id not in located:
                    located.add(thing.id)
                    start = plan.chunks[i].start_byte + len(passage[: passage.index(thing.name)].encode("utf-8"))
                    key = mention_key(ids[i], start, thing.id)
                    mentions[thing.kind].append(
                        {
                            "thing": thing.id,
                            "chunk": ids[i],
                            "props": {
                                "key": key,
                                "documentId": doc,
                                "startByte": start,
                                "endByte": start + len(thing.name.encode("utf-8")),
                                "quote": thing.name,
                                "runId": run,
                                "extractorVersion": EXTRACTOR_VERSION,
                            },
                        }
                    )
            group = facts.setdefault((fact.source.kind, fact.type, fact.target.kind), {})
            group.setdefault((fact.source.id, fact.target.id), {"a": fact.source.id, "b": fact.target.id})
    return FloorRows(
        document=document,
        chunks=chunks,
        pairs=[[ids[i], ids[i + 1]] for i in range(len(ids) - 1)],
        # Sorted, in one kind order for every document, so concurrent documents lock alike.
        things={kind: [rows[key] for key in sorted(rows)] for kind, rows in things.items() if rows},
        facts={key: [group[pair] for pair in sorted(group)] for key, group in sorted(facts.items())},
        mentions={kind: rows for kind, rows in mentions.items() if rows},
        fact_count=sum(len(group) for group in facts.values()),
    )


def floor_statements(rows: FloorRows) -> int:
    return 2 + (1 if rows.pairs else 0) + len(rows.things) + len(rows.facts) + len(rows.mentions)


async def write_floor(tx: neo4j.AsyncManagedTransaction, rows: FloorRows, run: str) -> None:
    doc = rows.document["id"]
    await tx.run(FLOOR_DOCUMENT, row=rows.document)
    await tx.run(FLOOR_CHUNKS, document=doc, rows=rows.chunks, run=run)
    if rows.pairs:
        await tx.run(FLOOR_NEXT, pairs=rows.pairs, run=run)
    for kind, things in rows.things.items():
        await tx.run(FLOOR_THINGS.format(label=kind), rows=things)
    for (source, fact_type, target), facts in rows.facts.items():
        statement = FLOOR_FACTS.format(source=source, type=fact_type, target=target)
        await tx.run(statement, rows=facts, document=doc, run=run, version=EXTRACTOR_VERSION)
    for kind, mentions in rows.mentions.items():
        await tx.run(FLOOR_MENTIONS.format(label=kind), rows=mentions)


async def ingest_floor(
    driver: neo4j.AsyncDriver, database: str | None, corpus: Corpus, documents_in_flight: int, fingerprint: str
) -> Outcome:
    """The baseline, not the toolkit: hand-written statements on the plain driver."""
    chunker = Chunker(CHUNKER_OPTIONS)
    embedder = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
    run = f"run-{uuid.uuid4().hex}"
    gate = asyncio.Semaphore(documents_in_flight)
    attempts = 0
    statements = 0
    began = time.perf_counter()
    started = datetime.now(UTC)

    async def one(name: str, text: str) -> tuple[int, int]:
        nonlocal attempts, statements
        async with gate:
            rows = await floor_rows(corpus, name, text, chunker, embedder, fingerprint, run)

            async def work(tx: neo4j.AsyncManagedTransaction) -> None:
                nonlocal attempts, statements
                attempts += 1
                statements += floor_statements(rows)
                await write_floor(tx, rows, run)

            async with driver.session(database=database) as session:
                await session.execute_write(work)
            return len(rows.chunks), rows.fact_count

    done = await asyncio.gather(*(one(name, text) for name, text in corpus.documents))
    chunks = sum(c for c, _ in done)
    run_row = {
        "id": run,
        "status": "Completed",
        "settingsFingerprint": fingerprint,
        "documentsIngested": len(done),
        "documentsUnchanged": 0,
        "documentsFailed": 0,
        "chunksWritten": chunks,
    }
    await driver.execute_query(FLOOR_RUN, row=run_row, started=started, database_=database)
    seconds = time.perf_counter() - began
    facts = sum(f for _, f in done)
    return Outcome("floor", seconds, len(done), chunks, facts, attempts - len(done), statements)


# ------------------------------------------------------------------ the graphs, compared


async def census(store: Store) -> dict[str, Any]:
    """Counts per label, type and property key, and digests of chunks, things, facts and mentions."""

    async def rows(query: str) -> list[list[Any]]:
        # Each record as its values in RETURN order (the digests hash them as lists).
        return [list(record.values()) for record in await store.read(query, name="bench.census")]

    def digest(found: list[list[Any]]) -> str:
        sha = hashlib.sha256()
        for row in found:
            sha.update(json.dumps(row, separators=(",", ":")).encode("utf-8"))
        return sha.hexdigest()[:16]

    return {
        "nodes": dict(
            await rows("MATCH (n) WHERE NOT n:IngestionRun UNWIND labels(n) AS l RETURN l, count(*) ORDER BY l")
        ),
        "edges": dict(await rows("MATCH ()-[r]->() RETURN type(r), count(*) ORDER BY type(r)")),
        "node_keys": dict(
            await rows(
                "MATCH (n) WHERE NOT n:IngestionRun UNWIND labels(n) AS l UNWIND keys(n) AS k "
                "RETURN l + '.' + k, count(*) ORDER BY 1"
            )
        ),
        "edge_keys": dict(
            await rows("MATCH ()-[r]->() UNWIND keys(r) AS k RETURN type(r) + '.' + k, count(*) ORDER BY 1")
        ),
        "chunks": digest(
            await rows("MATCH (c:Chunk) RETURN c.id, c.startByte, c.endByte, c.text, c.embedding ORDER BY c.id")
        ),
        "things": digest(
            await rows(
                "MATCH (e) WHERE e.extractorVersion IS NOT NULL "
                "RETURN labels(e), e.id, e.name, e.aliases, e.isPlaceholder ORDER BY e.id"
            )
        ),
        "facts": digest(
            await rows(
                "MATCH (a)-[f]->(b) WHERE f.documentIds IS NOT NULL "
                "RETURN type(f), a.id, b.id, f.documentIds ORDER BY type(f), a.id, b.id"
            )
        ),
        "mentions": digest(
            await rows(
                "MATCH (t)-[m:MENTIONED_IN]->(c) RETURN m.key, t.id, c.id, m.startByte, m.endByte, m.quote, m.documentId "
                "ORDER BY m.key"
            )
        ),
        "shared_facts": (
            await rows("MATCH ()-[f]->() WHERE size(f.documentIds) > 1 RETURN count(f), max(size(f.documentIds))")
        )[0],
    }


def compare(ours: dict[str, Any], floor: dict[str, Any]) -> list[str]:
    return [f"{part}: graphrag-orm {ours[part]} vs floor {floor[part]}" for part in ours if ours[part] != floor[part]]


# ------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    logging.getLogger("neo4j").setLevel(logging.ERROR)  # retries are counted, not logged
    print(f"machine: {machine_description()}")
    chunker = Chunker(CHUNKER_OPTIONS)
    began = time.perf_counter()
    corpus = generate_corpus(args.seed, args.documents)
    replies = scripted_replies(corpus, chunker)
    warm = generate_corpus(args.seed + 1, args.warmup_documents)
    warm_replies = scripted_replies(warm, chunker)
    print(
        f"corpus: {len(corpus.documents):,} documents, {corpus.utf8_bytes / 1e3:,.0f} kB, {len(replies):,} distinct "
        f"chunks, {sum(KIND_COUNTS.values())} things, a pool of {len(corpus.facts):,} facts "
        f"(seed {args.seed}, made with its replies in {time.perf_counter() - began:.1f} s)"
    )
    in_flight = args.documents_in_flight
    fingerprint = our_service(Store(), replies).fingerprint
    assert fingerprint == settings_fingerprint(
        Chunker(CHUNKER_OPTIONS), OFFLINE_EMBEDDING_SET, Extractor(ONTOLOGY, ScriptedChat(lambda _r: "")).fingerprint
    )
    chosen = args.contenders.split(",")
    server = BenchServer(port=BENCH_PORT, home=BENCH_HOME, uri=args.uri or "")
    with server:
        settings = server.settings
        driver = await open_driver(settings)
        store = Store(driver, database=settings.database)
        # Ours runs on the store; the floor on the plain driver beneath it.
        contenders: dict[str, Callable[[Corpus, dict[str, str]], Awaitable[Outcome]]] = {
            "ours": lambda c, r: ingest_ours(store, c, r, args.write_attempts, in_flight),
            "floor": lambda c, _r: ingest_floor(driver, settings.database, c, in_flight, fingerprint),
        }
        try:
            print(f"server: Neo4j {await server_version(store)} at {settings.uri}; {in_flight} documents in flight\n")
            for name in chosen:
                await reset_database(store, ONTOLOGY.schema_definitions(Layout.DEFAULT))
                await contenders[name](warm, warm_replies)
            print(f"warm-up: each contender wrote {args.warmup_documents} other documents first\n")
            outcomes: list[Outcome] = []
            graphs: dict[str, dict[str, Any]] = {}
            # Interleaved rounds, each on a fresh database: load from other work on the
            # machine then falls on both contenders alike, and the best round of each counts.
            for round_number in range(1, args.rounds + 1):
                for name in chosen:
                    await reset_database(store, ONTOLOGY.schema_definitions(Layout.DEFAULT))
                    with LoadProbe(server.server_pid) as probe:
                        outcome = await contenders[name](corpus, replies)
                    outcome.load = probe.report()
                    graph = await census(store)
                    if name in graphs and compare(graphs[name], graph):
                        raise SystemExit(f"{name} wrote another graph in round {round_number}")
                    graphs[name] = graph
                    outcomes.append(outcome)
                    print(
                        f"round {round_number}, {outcome.name}: {outcome.facts:,} facts ({outcome.chunks:,} chunks) "
                        f"in {outcome.seconds:.1f} s = {outcome.facts_per_second:,.0f} facts/s; "
                        f"{outcome.write_retries} transactions retried, {outcome.failed_then_ingested} documents "
                        f"failed and were ingested again; {outcome.load.describe()}"
                    )
            report(outcomes, graphs)
            await reset_database(store, ONTOLOGY.schema_definitions(Layout.DEFAULT))
        finally:
            await driver.close()


def report(outcomes: list[Outcome], graphs: dict[str, dict[str, Any]]) -> None:
    """The best round of each contender, and every round's facts per second."""
    best: dict[str, Outcome] = {}
    for o in outcomes:
        if o.name not in best or o.facts_per_second > best[o.name].facts_per_second:
            best[o.name] = o
    ours = best.get("graphrag-orm")
    rows = [
        [
            o.name,
            f"{o.facts:,}",
            f"{o.chunks:,}",
            f"{o.seconds:.1f} s",
            f"{o.facts_per_second:,.0f}",
            f"{o.facts_per_second / ours.facts_per_second:.2f}x" if ours and o is not ours else "",
            f"{o.statements / (o.documents + o.write_retries):.1f}",
            f"{o.write_retries}",
            f"{o.failed_then_ingested}",
            f"{o.load.others_busy:.0%}" if o.load else "",
            ", ".join(f"{r.facts_per_second:,.0f}" for r in outcomes if r.name == o.name),
        ]
        for o in best.values()
    ]
    print()
    print_table(
        [
            "Contender (best round)",
            "Facts",
            "Chunks",
            "Time",
            "Facts/s",
            "This / graphrag-orm",
            "Statements per transaction",
            "Retried",
            "Failed, ingested again",
            "Other work",
            "Facts/s in each round",
        ],
        rows,
    )
    print()
    for name, graph in graphs.items():
        shared, most = graph["shared_facts"]
        print(f"graph after {name}: nodes {graph['nodes']}, edges {graph['edges']}")
        print(f"  {shared:,} facts are stated by more than one document (at most {most})")
    if "ours" in graphs and "floor" in graphs:
        differences = compare(graphs["ours"], graphs["floor"])
        if differences:
            print("\nTHE FLOOR'S GRAPH DIFFERS FROM OURS:\n  " + "\n  ".join(differences))
            raise SystemExit(1)
        print(
            "\ngraphrag-orm's and the floor's graphs are identical: nodes per label, edges per type, property "
            "keys, chunks, things, facts with their documentIds, and mentions with their keys and spans"
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--warmup-documents", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each contender counts")
    parser.add_argument("--contenders", default="ours,floor", help="comma-separated, in order: ours, floor")
    parser.add_argument(
        "--documents-in-flight",
        type=int,
        default=IngestionOptions().documents_in_flight,
        help="documents worked on at once, by both contenders (IngestionOptions.documents_in_flight)",
    )
    parser.add_argument(
        "--write-attempts",
        type=int,
        default=10,
        help="graphrag-orm's tries of a document's transaction (IngestionOptions.write_attempts; default there 3)",
    )
    parser.add_argument("--uri", default=None, help="another server to use (it is wiped); default: our own on 7698")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
