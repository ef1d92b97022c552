"""The recall question: plain hybrid retrieval misses a product; the graph route cites every link.

    .venv/bin/python examples/recall/run.py

Runs on its own local Neo4j (port 7689, tools/neo4j/home-recall) unless NEO4J_URI is set,
because its migration chain adds the bikes ontology's schema to the toolkit's. Offline by
default: extraction and the answer are replies written by hand (examples/recall/bikes.py),
checked and grounded exactly as a model's would be. With OPENAI_API_KEY set, a real model
(GRAPHRAG_CHAT_MODEL, default gpt-4.1-mini) extracts and answers instead.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from rich.console import Console

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # run from anywhere in a checkout

from examples.recall.bikes import AFFECTED, BIKES, RECALL_QUESTION, answer_reply, extraction_reply  # noqa: E402
from graphrag_orm.answers import Answer, Disposition  # noqa: E402
from graphrag_orm.chat import ChatClient, OpenAIChat, ScriptedChat  # noqa: E402
from graphrag_orm.cli.ask import show_answer  # noqa: E402
from graphrag_orm.embeddings import HashingEmbedder  # noqa: E402
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET  # noqa: E402
from graphrag_orm.facade import GraphRag  # noqa: E402
from graphrag_orm.localdb import LocalDbSettings, start  # noqa: E402
from graphrag_orm.migrate import Chain, Migrator  # noqa: E402
from graphrag_orm.retrieval import Retrievers  # noqa: E402
from graphrag_orm.sources import Sources  # noqa: E402

console = Console(highlight=False)
BASE_URI = "https://example.org/graphrag-orm/recall/"


def models() -> tuple[ChatClient, ChatClient, str]:
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        model = os.environ.get("GRAPHRAG_CHAT_MODEL", "gpt-4.1-mini")
        chat = OpenAIChat(model)
        return chat, chat, model
    return ScriptedChat(extraction_reply), ScriptedChat(answer_reply), "replies written by hand (no model)"


def summary(label: str, answer: Answer) -> None:
    pages = "\n".join(item.text for item in answer.evidence.items)
    found = [bike for bike, words in (("City 3", "BC-310 hydraulic"), ("Trail 5", "brake kit BK-7")) if words in pages]
    console.print(
        f"[bold]{label}[/]: {len(answer.evidence.items)} evidence items; spec sheets in evidence: {found or 'none'}"
    )


async def main() -> int:
    if not os.environ.get("NEO4J_URI"):
        settings = LocalDbSettings.from_env(home_name="home-recall", port=7689)
        console.print(f"[dim]starting the sample's own Neo4j on {settings.uri} ...[/]")
        await asyncio.to_thread(start, settings)
        os.environ["NEO4J_URI"] = settings.uri
    extraction_chat, answer_chat, label = models()
    console.print(f"[bold]models[/] {label}; embedder HashingEmbedder (offline stand-in)\n")
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=answer_chat,
        extraction_chat=extraction_chat,
        ontology=BIKES,
    )
    await rag.connect(check_schema=False)
    try:
        applied = await Migrator(Chain.load(HERE / "migrations")).apply()
        if applied.applied:
            console.print(f"applied {', '.join(applied.applied)}")
        await rag.check_vector_index()
        receipt = await rag.ingestion.ingest(Sources.folder(HERE / "wiki", base_uri=BASE_URI))
        extraction = receipt.extraction
        console.print(
            f"ingested {receipt.ingested}, unchanged {receipt.unchanged}, failed {receipt.failed}; "
            f"extraction kept {extraction.entities if extraction else 0} things and "
            f"{extraction.facts if extraction else 0} facts (per document), pruned {len(extraction.pruned) if extraction else 0}\n"
        )
        assert rag.answers is not None
        console.print(f"[bold]Q:[/] {RECALL_QUESTION}\n")
        plain = await rag.answers.answer(
            RECALL_QUESTION, options=Retrievers.hybrid().model_copy(update={"max_items": 24})
        )
        summary("hybrid (vector + full-text), 24 items", plain)
        show_answer(plain, label)
        console.print()
        graph = await rag.answers.answer(RECALL_QUESTION, options=Retrievers.hybrid_graph())
        summary("hybrid + graph route, 24 items", graph)
        show_answer(graph, label)
        facts = [c.text for c in graph.evidence.context if c.reason.startswith("graph-fact")]
        console.print(f"[dim]{len(facts)} facts given to the model as context, e.g. {facts[:3]}[/]")
        complete = graph.disposition == Disposition.ANSWERED and all(b in (graph.text or "") for b in AFFECTED)
        return 0 if complete else 1
    finally:
        await rag.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
