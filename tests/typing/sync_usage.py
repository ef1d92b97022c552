"""Checked by ``mypy --strict`` (``make typecheck``): the blocking facade is typed, never ``Any``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_type

from graphrag_orm import Answer, Completed, Delta, Evidence, GraphRag, IngestionReceipt, Retrieved, Sources, Turn
from graphrag_orm.maintenance import HealthReport
from graphrag_orm.retrieval import RetrievalOptions
from graphrag_orm.sync import SyncGraphRag


def use(rag: GraphRag) -> None:
    with rag.sync().connect() as sync_rag:
        assert_type(sync_rag, SyncGraphRag)
        assert_type(sync_rag.ingestion.ingest([Sources.text("a", "A text.")]), IngestionReceipt)
        assert_type(sync_rag.retriever.retrieve("q"), Evidence)
        assert_type(rag.sync().answers.answer("q"), Answer)
        assert_type(sync_rag.answers.answer("q", history=[Turn(question="p")]), Answer)
        assert_type(sync_rag.answers.stream("q"), Iterator[Retrieved | Delta | Completed])
        assert_type(sync_rag.maintenance.check(), HealthReport)
        # Arguments are checked too: the retrieval's options are keyword-only (an unused ignore fails).
        sync_rag.answers.answer("q", RetrievalOptions())  # type: ignore[call-arg, arg-type]


def ask_the_graph(rag: GraphRag) -> None:
    """``rag.sync().graph`` (Text2Cypher) is typed: the answer, its rows and its refusal."""
    from graphrag_orm.codes import GraphRefusal
    from graphrag_orm.text2cypher import GraphAnswer

    answer = rag.sync().graph.ask("How many bulletins are there?")
    assert_type(answer, GraphAnswer)
    assert_type(answer.refusal, GraphRefusal | None)
    assert_type(answer.answered, bool)
    rag.sync().graph.ask(question=1)  # type: ignore[arg-type]
