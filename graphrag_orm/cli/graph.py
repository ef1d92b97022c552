"""``graphrag-orm graph ask "question" [--json]``: a graph question answered by a sandboxed query.

The model the environment names (``GRAPHRAG_MODEL_MODE`` live, replay or record, see
:mod:`graphrag_orm.environment`) writes one read-only query; the sandbox gates and runs it; the query and its rows are printed as a
table, with any limit reached. A refusal prints the query (when there was one) and one
line on stderr with its code, and exits 2; an error (no model, no database, an empty
question) exits 1. The offline stand-in cannot write Cypher, so without a model the
command fails with ``stand-in-unsupported``. No scope is taken: the query reads the
whole database.
"""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from graphrag_orm.cli._common import (
    OntologyOption,
    console,
    error_line,
    errors,
    fail,
    load_ontology,
    print_json,
    run,
    stored,
    written_by,
)
from graphrag_orm.codes import ErrorCode
from graphrag_orm.environment import graphrag_from_env, model_settings
from graphrag_orm.errors import GraphRagError
from graphrag_orm.text2cypher import GraphAnswer, GraphQuestions, Text2CypherOptions

__all__ = ["app", "ask", "show_graph_answer"]

app = typer.Typer(
    help="Questions about the graph (Text2Cypher): the query and its rows, or a refusal.", no_args_is_help=True
)


def _cell(value: Any) -> Text:
    """A value as it reads in a table: text as it is, anything else as JSON (never markup)."""
    return stored(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def show_graph_answer(answer: GraphAnswer, chat_label: str) -> None:
    """The query, its rows as a table, the limits reached and the receipt (a refusal's line is the caller's)."""
    if answer.query is not None:
        console.print(Panel(stored(answer.query), title="query", expand=False))
        console.print(written_by(chat_label))
    if answer.answered:
        table = Table(*answer.columns)
        for row in answer.rows:
            table.add_row(*(_cell(row.get(column)) for column in answer.columns))
        console.print(table)
        console.print(f"{answer.message}; shown as returned, nothing added")
    for limit in answer.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} ({limit.value:,})")
    receipt = answer.receipt
    tokens = "" if receipt.input_tokens is None else f", {receipt.input_tokens} in / {receipt.output_tokens} out tokens"
    console.print(
        f"[dim]{receipt.chat_calls} chat call{tokens}; model {receipt.chat_seconds:.2f} s, "
        f"query {receipt.query_seconds:.2f} s[/]"
    )


@app.command("ask")
def ask(
    question: str = typer.Argument(..., help="The question about the graph."),
    as_json: bool = typer.Option(False, "--json", help="Print the GraphAnswer as JSON."),
    ontology: str | None = OntologyOption,
    max_rows: int = typer.Option(50, "--max-rows", help="Rows read and shown (1 to 1,000)."),
    timeout: float = typer.Option(10.0, "--timeout", help="The query's timeout in seconds (0.1 to 120)."),
) -> None:
    """Ask a model for one read-only query, run it in the sandbox, print the query and its rows."""
    try:
        # The reply's bound from GRAPHRAG_TEXT2CYPHER_MAX_TOKENS (512 for an openai-compatible server).
        options = model_settings().load.text2cypher(Text2CypherOptions(max_rows=max_rows, timeout_seconds=timeout))
        rag, choice = graphrag_from_env(ontology=load_ontology(ontology))
    except GraphRagError as error:
        fail(error.message, error.code)
    if getattr(choice.chat, "is_stand_in", False):
        fail(
            "graph questions need a model that writes Cypher, which the offline stand-in cannot: "
            "set GRAPHRAG_MODEL_MODE (live, replay or record) and its provider",
            ErrorCode.STAND_IN_UNSUPPORTED,
        )
    graph = GraphQuestions(rag.store, rag.model, choice.chat, options, rag.ontology)

    async def work() -> GraphAnswer:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            return await graph.ask(question)
        finally:
            await rag.close()

    answer = run(work())
    if as_json:
        print_json(answer.to_json())
    else:
        show_graph_answer(answer, choice.chat_label)
    if answer.refusal is not None:
        if not as_json:
            errors.print(error_line(answer.message, answer.refusal.value))
        raise typer.Exit(2)
