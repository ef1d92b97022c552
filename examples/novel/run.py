"""The novel sample: chapter I of Alice with the novel ontology, evaluated on labelled questions.

    make eval          # or: .venv/bin/python examples/novel/run.py [--html FILE] [--fetch]

Runs on its own local Neo4j (port 7685, home ``home-novel``; GRAPHRAG_NOVEL_PORT and
GRAPHRAG_NOVEL_HOME choose others) unless NEO4J_URI is set, because its migration chain
adds the novel ontology's schema (and the vector index of the embedder it runs with) to
the toolkit's. It ingests the chapter with extraction, runs the harness
(:mod:`graphrag_orm.evaluation`) on ``cases.jsonl``, prints the table and writes the HTML
report (``report.html`` here unless ``--html`` names another file).

Offline (the default GRAPHRAG_MODEL_MODE): the embedder is the local model when the
``local`` extra is installed, else the HashingEmbedder stand-in (GRAPHRAG_DEMO_EMBEDDER=hashing
forces it); extraction uses the replies written by hand in ``alice.py``; answers come from
the ExtractiveChat stand-in, which quotes the evidence. Another mode (live, replay,
record: see :mod:`graphrag_orm.environment`) extracts and answers with the client it names.

``--fetch`` downloads the whole book (Project Gutenberg eBook #11, plain text) and ingests
it instead of the chapter; only when asked, and never in tests. Without a network it
fails with ``fetch-failed``. A document that fails to ingest is printed with why, and the
sample stops there instead of evaluating a partial graph. Exit code 0 when every case ran,
1 when one failed to run, 2 for a coded error (printed on one line), a failed document
included.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from rich.console import Console

HERE = Path(__file__).resolve().parent
if str(HERE.parents[1]) not in sys.path:
    sys.path.insert(0, str(HERE.parents[1]))  # run from anywhere in a checkout

from examples.chains import sample_chain  # noqa: E402
from examples.ingested import require_ingested  # noqa: E402
from examples.novel.alice import ONTOLOGY, extraction_reply  # noqa: E402
from examples.recall.run import Embedding, choose_embedder, sample_options  # noqa: E402
from graphrag_orm.chat import ChatClient, ExtractiveChat, ScriptedChat  # noqa: E402
from graphrag_orm.codes import ErrorCode  # noqa: E402
from graphrag_orm.embeddings import EmbeddingSet  # noqa: E402
from graphrag_orm.environment import ModelMode, chat_from_env  # noqa: E402
from graphrag_orm.errors import FetchFailed, GraphRagError  # noqa: E402
from graphrag_orm.evaluation import EvaluationReport, Evaluator, load_cases, render_table, write_html  # noqa: E402
from graphrag_orm.facade import GraphRag  # noqa: E402
from graphrag_orm.ingestion import IngestionReceipt  # noqa: E402
from graphrag_orm.localdb import LocalDbSettings, start  # noqa: E402
from graphrag_orm.migrate import Chain, Migrator  # noqa: E402
from graphrag_orm.sources import Source, Sources  # noqa: E402

__all__ = [
    "CASES",
    "CHAPTER",
    "CHAPTER_URI",
    "chain_for",
    "chapter_source",
    "fetch_book",
    "ingest",
    "main",
    "models",
    "run_sample",
]

console = Console(highlight=False)
CHAPTER = HERE / "alice-chapter-1.txt"
CASES = HERE / "cases.jsonl"
#: Named by a fixed address rather than by path, so the document id is the same in any clone.
CHAPTER_URI = "https://example.org/graphrag-orm/novel/alice-chapter-1.txt"
BOOK_URL = "https://www.gutenberg.org/cache/epub/11/pg11.txt"
BOOK_URI = "https://www.gutenberg.org/ebooks/11"
MAX_BOOK_BYTES = 2 * 1024 * 1024
NOVEL_HOME = "home-novel"
NOVEL_PORT = 7685


def chain_for(embedding_set: EmbeddingSet) -> Chain:
    """The toolkit's chain plus one revision: the novel ontology's keys and names index, this set's vector index."""
    return sample_chain(ONTOLOGY, embedding_set, "novel")


def models() -> tuple[ChatClient, ChatClient, str]:
    """Offline: the replies written by hand and the ExtractiveChat stand-in; another mode: the client it names."""
    chat, label, mode = chat_from_env()
    if mode != ModelMode.OFFLINE:
        return chat, chat, label
    answers = ExtractiveChat()
    return (
        ScriptedChat(extraction_reply),
        answers,
        f"extraction: replies written by hand (stand-in); answers: {answers.label}",
    )


def chapter_source() -> Source:
    return Sources.file(CHAPTER, uri=CHAPTER_URI)


def fetch_book(cache: Path, url: str = BOOK_URL) -> Source:
    """The whole book from Project Gutenberg (#11), without its header and licence, cached in ``cache``."""
    target = cache / "pg11-alice.txt"
    if not target.exists():
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                data = response.read(MAX_BOOK_BYTES + 1)
        except (urllib.error.URLError, OSError, TimeoutError) as error:
            raise FetchFailed(
                ErrorCode.FETCH_FAILED,
                f"could not download Project Gutenberg #11 from www.gutenberg.org ({type(error).__name__}); "
                "run without --fetch for the chapter that ships with the sample",
            ) from None
        text = data[:MAX_BOOK_BYTES].decode("utf-8-sig", errors="replace")
        start_marker, end_marker = text.find("*** START OF"), text.find("*** END OF")
        if start_marker < 0 or end_marker < start_marker:
            raise FetchFailed(
                ErrorCode.FETCH_FAILED, "the downloaded text has no Project Gutenberg start and end marks"
            )
        body = text[text.index("\n", start_marker) + 1 : end_marker].strip() + "\n"
        cache.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    return Sources.file(target, uri=BOOK_URI)


async def ingest(rag: GraphRag, source: Source) -> IngestionReceipt:
    """Ingest ``source`` with extraction and print what it kept; a failed document is printed with
    why, and raised as its code (see :func:`examples.ingested.require_ingested`)."""
    receipt = await rag.ingestion.ingest([source])
    extraction = receipt.extraction
    kept = ""
    if extraction is not None:
        kept = f"; extraction kept {extraction.entities} things, {extraction.facts} facts, {extraction.quotes} quotes"
        kept += f" ({len(extraction.pruned)} pruned)"
    console.print(
        f"ingested {receipt.ingested}, unchanged {receipt.unchanged}, failed {receipt.failed} "
        f"({receipt.chunks_written} chunks written){kept}"
    )
    require_ingested(receipt, console)
    return receipt


async def run_sample(*, html: Path, fetch: bool = False, start_server: bool = True) -> EvaluationReport:
    """Start the sample's server (unless NEO4J_URI), migrate, ingest, evaluate the cases, print and write the report."""
    if start_server and not os.environ.get("NEO4J_URI"):
        home = os.environ.get("GRAPHRAG_NOVEL_HOME") or NOVEL_HOME
        port = int(os.environ.get("GRAPHRAG_NOVEL_PORT") or NOVEL_PORT)
        settings = LocalDbSettings.from_env(home_name=home, port=port)
        console.print(f"[dim]starting the sample's own Neo4j on {settings.uri} (home {home}) ...[/]")
        status = await asyncio.to_thread(start, settings)
        console.print(f"[dim]{status.message}[/]")
        os.environ["NEO4J_URI"] = settings.uri
        os.environ.setdefault("NEO4J_PASSWORD", settings.password)
    source = fetch_book(Path.home() / ".cache" / "graphrag-orm") if fetch else chapter_source()
    embedding: Embedding = choose_embedder()
    extraction_chat, answer_chat, chat_label = models()
    console.print(f"[bold]embedder[/]  {embedding.label}")
    console.print(f"[bold]models[/]    {chat_label}")
    options = sample_options(embedding)
    rag = GraphRag(
        embedding_set=embedding.embedding_set,
        embedder=embedding.embedder,
        chat=answer_chat,
        extraction_chat=extraction_chat,
        ontology=ONTOLOGY,
        options=options,
    )
    await rag.connect(check_schema=False)
    try:
        applied = await Migrator(rag.store, chain_for(embedding.embedding_set)).apply()
        console.print(f"applied {', '.join(applied.applied)}" if applied.applied else "migrations: up to date")
        await rag.check_vector_index()
        await ingest(rag, source)
        cases = load_cases(CASES)
        console.print(f"\n[bold]{len(cases)} cases[/] from {CASES.name}, each retrieved and answered\n")
        report = await Evaluator(rag, k=10).run(cases)
    finally:
        await rag.close()
    render_table(report, console)
    written = write_html(report, html).resolve()
    shown = written.relative_to(Path.cwd()) if written.is_relative_to(Path.cwd()) else written
    console.print(f"\nreport written to {shown}")
    return report


async def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The novel sample, evaluated on labelled questions.")
    parser.add_argument("--html", type=Path, default=HERE / "report.html", help="where to write the HTML report")
    parser.add_argument("--fetch", action="store_true", help="download the whole book (Project Gutenberg #11)")
    parsed = parser.parse_args(arguments)
    try:
        report = await run_sample(html=parsed.html, fetch=parsed.fetch)
    except GraphRagError as error:
        console.print(f"[red]error[/] {error.message} ({error.code})")
        if error.code in (ErrorCode.UNKNOWN_REVISION, ErrorCode.PREDECESSOR_NOT_HEAD):
            console.print(
                "the sample's database was set up for another embedder: run it with that embedder, or give it a "
                "server of its own: GRAPHRAG_NOVEL_PORT=7691 GRAPHRAG_NOVEL_HOME=home-novel-2 make eval"
            )
        return 2
    return 1 if any(case.error_code for case in report.cases) else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
