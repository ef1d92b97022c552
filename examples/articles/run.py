"""The articles sample: two short fictional articles read with the article ontology.

    .venv/bin/python examples/articles/run.py

Runs on its own local Neo4j (port 7684, home ``home-articles``; GRAPHRAG_ARTICLES_PORT and
GRAPHRAG_ARTICLES_HOME choose others) unless NEO4J_URI is set, because its migration chain
adds the article ontology's schema to the toolkit's. It ingests ``articles/`` with
extraction and prints the graph: every thing with the bytes each mention was located at,
every fact, and every quote with its located bytes, each read back from the database.

Offline (the default GRAPHRAG_MODEL_MODE): extraction uses the replies written by hand in
``press.py``, and the embedder is the local model when the ``local`` extra is installed,
else the HashingEmbedder stand-in (GRAPHRAG_DEMO_EMBEDDER=hashing forces it). Another
mode (live, replay, record: see :mod:`graphrag_orm.environment`) extracts with the client
it names. Exit code 0 when both articles are ingested, 2 for a coded error, a failed
article included (printed with why; the graph is not shown then).
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
if str(HERE.parents[1]) not in sys.path:
    sys.path.insert(0, str(HERE.parents[1]))  # run from anywhere in a checkout

from examples.articles.press import METADATA, ONTOLOGY, extraction_reply  # noqa: E402
from examples.chains import sample_chain  # noqa: E402
from examples.ingested import require_ingested  # noqa: E402
from examples.recall.run import choose_embedder  # noqa: E402
from graphrag_orm.chat import ChatClient, ScriptedChat  # noqa: E402
from graphrag_orm.embeddings import EmbeddingSet  # noqa: E402
from graphrag_orm.environment import ModelMode, chat_from_env  # noqa: E402
from graphrag_orm.errors import GraphRagError  # noqa: E402
from graphrag_orm.facade import GraphRag  # noqa: E402
from graphrag_orm.ingestion import IngestionReceipt  # noqa: E402
from graphrag_orm.localdb import LocalDbSettings, start  # noqa: E402
from graphrag_orm.migrate import Chain, Migrator  # noqa: E402
from graphrag_orm.ontology import MENTION_TYPE  # noqa: E402
from graphrag_orm.sources import Source, Sources  # noqa: E402
from graphrag_orm.store import Store  # noqa: E402

__all__ = ["GraphView", "chain_for", "extraction_chat", "main", "read_graph", "sources"]

console = Console(highlight=False)
BASE_URI = "https://courier.example/2026/11/"
ARTICLES_HOME = "home-articles"
ARTICLES_PORT = 7684


@dataclass(frozen=True)
class GraphView:
    """What the graph holds, read back: things with mention spans, facts, and quotes with spans."""

    things: list[dict[str, object]]
    facts: list[dict[str, object]]
    quotes: list[dict[str, object]]


def sources() -> list[Source]:
    """Each article, named by the publisher's address, with the publisher's metadata."""
    return [
        Sources.file(HERE / "articles" / name, uri=str(metadata.url), metadata=metadata)
        for name, metadata in sorted(METADATA.items())
    ]


def chain_for(embedding_set: EmbeddingSet) -> Chain:
    """The toolkit's chain plus one revision: the article ontology's keys and names index, this set's vector index."""
    return sample_chain(ONTOLOGY, embedding_set, "articles")


def extraction_chat() -> tuple[ChatClient, str]:
    """Offline: the replies written by hand; another GRAPHRAG_MODEL_MODE: the client it names."""
    chat, label, mode = chat_from_env()
    if mode != ModelMode.OFFLINE:
        return chat, label
    return ScriptedChat(extraction_reply), "replies written by hand (stand-in: no model)"


async def read_graph(store: Store) -> GraphView:
    """The article ontology's things, facts and quotes, projected (labels and types from the ontology)."""
    kinds = "|".join(ONTOLOGY.labels)
    things = await store.read(
        f"MATCH (t:{kinds})-[m:{MENTION_TYPE}]->() "
        "WITH t, m ORDER BY m.documentId, m.startByte "
        "RETURN head([l IN labels(t) WHERE l IN $kinds]) AS kind, t.name AS name, "
        "collect([m.startByte, m.endByte, m.quote]) AS mentions ORDER BY kind, name",
        {"kinds": list(ONTOLOGY.labels)},
        name="sample.articles.things",
    )
    facts = await store.read(
        f"MATCH (s:{kinds})-[f:{'|'.join(ONTOLOGY.fact_types)}]->(t:{kinds}) "
        "RETURN s.name AS source, type(f) AS type, t.name AS target, f.role AS role ORDER BY type, source, target",
        name="sample.articles.facts",
    )
    quotes = await store.read(
        f"MATCH (s:{kinds})-[q:{'|'.join(ONTOLOGY.quote_types)}]->() "
        "RETURN s.name AS speaker, type(q) AS type, q.startByte AS startByte, q.endByte AS endByte, q.quote AS quote "
        "ORDER BY q.documentId, q.startByte",
        name="sample.articles.quotes",
    )
    return GraphView(things.records, facts.records, quotes.records)


def show(view: GraphView) -> None:
    things = Table("kind", "name", "mentions (located bytes: text)", title="things")
    for row in view.things:
        spans = "; ".join(f"{start}-{end}: {text}" for start, end, text in row["mentions"])  # type: ignore[attr-defined]
        things.add_row(str(row["kind"]), str(row["name"]), spans)
    console.print(things)
    facts = Table("source", "fact", "target", "role", title="facts")
    for row in view.facts:
        facts.add_row(str(row["source"]), str(row["type"]), str(row["target"]), str(row["role"] or ""))
    console.print(facts)
    quotes = Table("speaker", "type", "bytes", "quote (stored text)", title="quotes")
    for row in view.quotes:
        quotes.add_row(str(row["speaker"]), str(row["type"]), f"{row['startByte']}-{row['endByte']}", str(row["quote"]))
    console.print(quotes)


async def run_sample(*, start_server: bool = True) -> tuple[IngestionReceipt, GraphView]:
    """Start the sample's server (unless NEO4J_URI), migrate, ingest both articles, print the graph."""
    if start_server and not os.environ.get("NEO4J_URI"):
        home = os.environ.get("GRAPHRAG_ARTICLES_HOME") or ARTICLES_HOME
        port = int(os.environ.get("GRAPHRAG_ARTICLES_PORT") or ARTICLES_PORT)
        settings = LocalDbSettings.from_env(home_name=home, port=port)
        console.print(f"[dim]starting the sample's own Neo4j on {settings.uri} (home {home}) ...[/]")
        status = await asyncio.to_thread(start, settings)
        console.print(f"[dim]{status.message}[/]")
        os.environ["NEO4J_URI"] = settings.uri
        os.environ.setdefault("NEO4J_PASSWORD", settings.password)
    embedding = choose_embedder()
    chat, label = extraction_chat()
    console.print(f"[bold]embedder[/]    {embedding.label}")
    console.print(f"[bold]extraction[/]  {label}")
    rag = GraphRag(
        embedding_set=embedding.embedding_set, embedder=embedding.embedder, extraction_chat=chat, ontology=ONTOLOGY
    )
    await rag.connect(check_schema=False)
    try:
        applied = await Migrator(rag.store, chain_for(embedding.embedding_set)).apply()
        console.print(f"applied {', '.join(applied.applied)}" if applied.applied else "migrations: up to date")
        await rag.check_vector_index()
        receipt = await rag.ingestion.ingest(sources())
        extraction = receipt.extraction
        kept = ""
        if extraction is not None:
            kept = (
                f"; extraction kept {extraction.entities} things, {extraction.facts} facts, {extraction.quotes} quotes"
            )
            kept += f" ({len(extraction.pruned)} pruned)"
        console.print(f"ingested {receipt.ingested}, unchanged {receipt.unchanged}, failed {receipt.failed}{kept}\n")
        require_ingested(receipt, console)
        view = await read_graph(rag.store)
    finally:
        await rag.close()
    show(view)
    return receipt, view


async def main() -> int:
    try:
        receipt, _ = await run_sample()
    except GraphRagError as error:
        console.print(f"[red]error[/] {error.message} ({error.code})")
        return 2
    return 1 if receipt.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
