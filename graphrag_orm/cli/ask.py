"""``graphrag-orm ask "question" [--export FILE] [--json] [--scope-document ID] [--global --ontology NAME]``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from graphrag_orm.answers import Answer, AnswerExport, Disposition
from graphrag_orm.citations import Citation
from graphrag_orm.cli._common import (
    OntologyOption,
    console,
    fail,
    load_ontology,
    print_json,
    resolve_documents,
    run,
    stored,
    written_by,
)
from graphrag_orm.codes import ErrorCode
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.retrieval import DocumentsScope, RetrievalOptions

__all__ = ["ask", "show_answer", "with_sources"]


def _source(item: EvidenceItem | None, citation: Citation) -> Text:
    """Where a citation comes from: its document's title (if any) over its source URI or path."""
    if item is None:
        return stored(citation.document_id[:12])
    where = stored(f"{item.title}\n{item.source_uri}" if item.title else item.source_uri)
    if citation.page:
        where.append(f" p.{citation.page}")
    return where


def show_answer(answer: Answer, chat_label: str) -> None:
    """An answer with each citation's source, byte span and quote; a refusal with its reason.

    Stored text (the answer, the quotes, titles and sources) is printed as text, never as markup.
    """
    if answer.disposition == Disposition.ANSWERED:
        console.print(Panel(stored(answer.text), title="answer", expand=False))
        console.print(written_by(chat_label, "answered"))
        table = Table(
            "#", "source", "bytes", "quote (stored text)", title="citations (each located in the stored bytes)"
        )
        sources = {item.chunk_id: item for item in answer.evidence.items}
        for position, citation in enumerate(answer.citations, start=1):
            table.add_row(
                str(position),
                _source(sources.get(citation.chunk_id), citation),
                f"{citation.start_byte}-{citation.end_byte}",
                stored(citation.quote),
            )
        console.print(table)
    else:
        console.print(Panel(stored(f"refused: {answer.reason}"), title="insufficient evidence", expand=False))
        console.print(written_by(chat_label, "answered"))
    receipt = answer.receipt
    tokens = "" if receipt.input_tokens is None else f", {receipt.input_tokens} in / {receipt.output_tokens} out tokens"
    console.print(
        f"[dim]{len(answer.evidence.items)} evidence items; {receipt.chat_calls} chat calls{tokens}; "
        f"retrieval {receipt.retrieval_seconds:.2f} s, answer {receipt.answer_seconds:.2f} s[/]"
    )


def with_sources(export: str) -> str:
    """An answer export whose citations also name their document's source URI and title (from the evidence)."""
    document = json.loads(export)
    answer = document["answer"]
    items = {item["chunkId"]: item for item in answer["evidence"]["items"]}
    for citation in answer["citations"] or ():
        item = items.get(citation["chunkId"], {})
        citation["sourceUri"] = item.get("sourceUri")
        citation["title"] = item.get("title")
    return json.dumps(document, ensure_ascii=False)


def ask(
    question: str = typer.Argument(..., help="The question."),
    export: Path | None = typer.Option(
        None, "--export", help="Write the whole answer as JSON (graphrag-orm-answer/1)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
    scope_document: list[str] = typer.Option(
        [], "--scope-document", help="Answer only from these documents (id, id prefix, source URI or path)."
    ),
    global_: bool = typer.Option(
        False,
        "--global",
        help="Answer a question about the whole corpus from the community reports (by the chat model; offline by word overlap).",
    ),
    ontology: str | None = OntologyOption,
) -> None:
    """Answer from the stored documents with checked citations, or refuse with a reason."""
    if global_:
        if export is not None or scope_document:
            fail("--global takes neither --export nor --scope-document", ErrorCode.INVALID_OPTION)
        _ask_global(question, ontology, as_json)
        return
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
        print_json(with_sources(AnswerExport.to_json(answer)))
    else:
        show_answer(answer, choice.chat_label)
        console.print(f"[dim]embedded by {escape(choice.embedder_label)}[/]", soft_wrap=True)
        if export is not None:
            console.print(f"[dim]exported to {export}[/]")
    if answer.disposition != Disposition.ANSWERED:
        raise typer.Exit(2)


def _ask_global(question: str, ontology_name: str | None, as_json: bool) -> None:
    """``ask --global``: the map and reduce over the community reports (graphrag_orm.communities): the
    environment's chat model's, or offline (word overlap) with the stand-in."""
    from graphrag_orm.communities import GlobalAnswer

    try:
        ontology = load_ontology(ontology_name)
        if ontology is None:
            fail("--global needs the ontology the reports were written for: pass --ontology", ErrorCode.INVALID_OPTION)
        rag, _ = graphrag_from_env(ontology=ontology)  # in a tenanted graph, the tenant's reports
    except GraphRagError as error:
        fail(error.message, error.code)

    async def work() -> GlobalAnswer:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            assert rag.global_answers is not None  # the facade has an ontology
            return await rag.global_answers.answer(question)
        finally:
            await rag.close()

    answer = run(work())
    if as_json:
        print_json(answer.to_json())
    elif answer.refused is not None:
        console.print(f"[yellow]refused[/] {answer.refused.value}")
    else:
        console.print(Text(answer.answer or ""))
        table = Table("document", "bytes", "quote")
        for citation in answer.citations:
            table.add_row(citation.document_id[:12], f"{citation.start_byte}-{citation.end_byte}", Text(citation.quote))
        console.print(table)
    if not as_json and answer.calls:
        console.print(
            f"[dim]by {escape(answer.writer)}: {answer.calls} calls, {answer.findings_shown} findings shown, "
            f"{answer.findings_dropped} dropped (no longer located), {answer.findings_invented} invented ids, "
            f"{answer.unreadable_replies} unreadable replies[/]",
            soft_wrap=True,
        )
    for limit in answer.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} ({limit.value:,})")
    if answer.refused is not None:
        raise typer.Exit(2)
