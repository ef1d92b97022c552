"""The quick start: ingest three pages, answer one question with checked citations, refuse another.

Run it when Neo4j is running and migrated (``make migrate``):
``.venv/bin/python examples/quickstart/demo.py``. (``make demo`` runs the recall wiki,
examples/recall/run.py, on a server of its own.) Offline by default
(labelled stand-ins, whatever keys are set); GRAPHRAG_MODEL_MODE=live with GRAPHRAG_PROVIDER
answers with GRAPHRAG_CHAT_MODEL (default gpt-4.1-mini); replay and record use recordings
(see graphrag_orm.environment).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rich.console import Console

from graphrag_orm.answers import AnswerExport, Disposition
from graphrag_orm.cli.ask import show_answer
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.sources import Sources

HERE = Path(__file__).resolve().parent
# Named by a fixed address rather than by path, so document ids are the same in any clone.
BASE_URI = "https://example.org/graphrag-orm/quickstart/"
ANSWERABLE = "How many items can a member borrow at a time?"
UNANSWERABLE = "Who won the 1998 football World Cup?"

console = Console(highlight=False)


async def main() -> int:
    try:
        rag, choice = graphrag_from_env()
    except GraphRagError as error:
        console.print(f"[red]error[/] {error.message} ({error.code})")
        return 2
    console.print(f"[bold]embedder[/] {choice.embedder_label}")
    console.print(f"[bold]chat[/]     {choice.chat_label}\n")
    await rag.connect()
    try:
        receipt = await rag.ingestion.ingest(Sources.folder(HERE / "docs", base_uri=BASE_URI))
        console.print(
            f"ingested {receipt.ingested}, unchanged {receipt.unchanged}, failed {receipt.failed} "
            f"({receipt.chunks_written} chunks written) in run {receipt.run_id}\n"
        )
        if receipt.failed:
            return 1
        assert rag.answers is not None

        console.print(f"[bold]Q:[/] {ANSWERABLE}")
        answered = await rag.answers.answer(ANSWERABLE)
        show_answer(answered, choice.chat_label)
        problems = AnswerExport.check(answered)
        console.print(f"offline check of every citation against its evidence bytes: {problems or 'all hold'}\n")

        console.print(f"[bold]Q:[/] {UNANSWERABLE}")
        refused = await rag.answers.answer(UNANSWERABLE)
        show_answer(refused, choice.chat_label)

        ok = answered.disposition == Disposition.ANSWERED and not problems
        ok = ok and refused.disposition == Disposition.INSUFFICIENT_EVIDENCE
        console.print("\n[bold green]demo complete[/]" if ok else "\n[bold red]demo did not go as expected[/]")
        return 0 if ok else 1
    finally:
        await rag.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
