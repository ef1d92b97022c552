"""``graphrag-orm ask "question" [--export FILE] [--json] [--scope-document ID]``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.panel import Panel
from rich.table import Table

from graphrag_orm.answers import Answer, AnswerExport, Disposition
from graphrag_orm.cli._common import console, fail, print_json, resolve_documents, run
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.retrieval import DocumentsScope, RetrievalOptions

__all__ = ["ask", "show_answer"]


def show_answer(answer: Answer, chat_label: str) -> None:
    """An answer with each citation's document, byte span and quote; a refusal with its reason."""
    if answer.disposition == Disposition.ANSWERED:
        console.print(Panel(answer.text or "", title="answer", subtitle=f"[dim]{chat_label}[/]"))
        table = Table(
            "#", "document", "bytes", "quote (stored text)", title="citations (each located in the stored bytes)"
        )
        sources = {item.chunk_id: item for item in answer.evidence.items}
        for position, citation in enumerate(answer.citations, start=1):
            item = sources.get(citation.chunk_id)
            where = (item.title or item.source_uri) if item else citation.document_id[:12]
            pages = f" p.{citation.page}" if citation.page else ""
            table.add_row(str(position), where + pages, f"{citation.start_byte}-{citation.end_byte}", citation.quote)
        console.print(table)
    else:
        console.print(
            Panel(f"refused: {answer.reason}", title="insufficient evidence", subtitle=f"[dim]{chat_label}[/]")
        )
    receipt = answer.receipt
    tokens = "" if receipt.input_tokens is None else f", {receipt.input_tokens} in / {receipt.output_tokens} out tokens"
    console.print(
        f"[dim]{len(answer.evidence.items)} evidence items; {receipt.chat_calls} chat calls{tokens}; "
        f"retrieval {receipt.retrieval_seconds:.2f} s, answer {receipt.answer_seconds:.2f} s[/]"
    )


def ask(
    question: str = typer.Argument(..., help="The question."),
    export: Path | None = typer.Option(
        None, "--export", help="Write the whole answer as JSON (graphrag-orm-answer/1)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
    scope_document: list[str] = typer.Option(
        [], "--scope-document", help="Answer only from these documents (id, id prefix, source URI or path)."
    ),
) -> None:
    """Answer from the stored documents with checked citations, or refuse with a reason."""
    try:
        rag, choice = graphrag_from_env()
    except GraphRagError as error:
        fail(error.message, error.code)

    async def work() -> Answer:
        await rag.connect()
        try:
            assert rag.answers is not None
            options = RetrievalOptions()
            if scope_document:
                ids = await resolve_documents(rag, scope_document)
                options = options.with_scope(DocumentsScope(document_ids=ids))
            return await rag.answers.answer(question, retrieval=options)
        finally:
            await rag.close()

    answer = run(work())
    problems = AnswerExport.check(answer)
    if problems:
        fail("the answer failed its own check: " + "; ".join(problems), "check-failed")
    if export is not None:
        export.write_text(AnswerExport.to_json(answer), encoding="utf-8")
    if as_json:
        print_json(AnswerExport.to_json(answer))
    else:
        show_answer(answer, choice.chat_label)
        if export is not None:
            console.print(f"[dim]exported to {export}[/]")
    if answer.disposition != Disposition.ANSWERED:
        raise typer.Exit(2)
