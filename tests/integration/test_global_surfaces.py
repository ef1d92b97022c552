"""Global answers where users meet them: ``rag.global_answers``, inside a scope, and the agent tool.

Over the harbour sample (32 pages, an ontology) with the offline report writer, on the real
Neo4j. A scope keeps every citation of a global answer inside it, and an answer inside one
scope names nothing outside it: no report, no count, no limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from examples.harbour.fleet import FLEET
from graphrag_orm import GraphRag
from graphrag_orm.codes import ErrorCode, GlobalRefusal
from graphrag_orm.communities import GlobalAnswers, ReportOptions, ReportService
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.retrieval.scope import DocumentsScope
from graphrag_orm.tools import GraphRagTools
from tests.integration.test_community_reports import harbour  # noqa: F401 (the fixture)

QUESTION = "Which ships are owned by House Orrin?"


async def documents(rag: GraphRag) -> dict[str, str]:
    """Each page's id by its file's stem (``gannet-log``, ``house-orrin``, ...)."""
    rows = await rag.store.read("MATCH (d:Document) RETURN d.id AS id, d.sourceUri AS uri")
    return {row["uri"].rsplit("/", 1)[-1]: row["id"] for row in rows}


def pages_of(citations: Any, ids: Mapping[str, str]) -> set[str]:
    stems = {document_id: stem for stem, document_id in ids.items()}
    return {stems[c.document_id] for c in citations}


async def test_the_facade_answers_inside_a_scope_and_names_nothing_outside_it(harbour: GraphRag) -> None:  # noqa: F811
    await ReportService(harbour.store, FLEET, ReportOptions(max_findings=20)).write()
    corpus = harbour.global_answers
    assert corpus is not None
    everywhere = await corpus.answer(QUESTION)
    ids = await documents(harbour)
    assert everywhere.refused is None and len(pages_of(everywhere.citations, ids)) >= 2
    gannet = ids["gannet-log"]
    inside = await corpus.answer(QUESTION, scope=DocumentsScope(document_ids=(gannet,)))
    assert inside.refused is None and inside.citations
    assert {c.document_id for c in inside.citations} == {gannet}
    assert "Gannet owned by House Orrin." in (inside.answer or "")
    assert "Skua" not in (inside.answer or "") and "Petrel" not in (inside.answer or "")
    # Nothing about the rest of the corpus: no dropped count, no limit, only reports it cited.
    assert inside.findings_dropped == 0 and inside.limits_reached == ()
    assert set(inside.reports) <= set(everywhere.reports)

    # A scope whose documents no relevant finding cites: the same refusal as no relevance at all.
    house = ids["house-orrin"]
    elsewhere = await corpus.answer("Which ships called at Brinmoor?", scope=DocumentsScope(document_ids=(house,)))
    assert elsewhere.refused == GlobalRefusal.NO_RELEVANT_FINDING and elsewhere.reports == ()


async def test_a_scope_without_a_resolver_is_an_invalid_option(harbour: GraphRag) -> None:  # noqa: F811
    with pytest.raises(ConfigurationError) as refused:
        await GlobalAnswers(harbour.store, FLEET).answer(QUESTION, scope=DocumentsScope(document_ids=("x" * 64,)))
    assert refused.value.code == ErrorCode.INVALID_OPTION


async def test_the_agent_tool_answers_about_the_corpus_inside_its_scope(harbour: GraphRag) -> None:  # noqa: F811
    refused = (await GraphRagTools(harbour).call("answer_about_corpus", {"question": QUESTION})).to_payload()
    assert refused["answered"] is False and refused["reason"] == "no-reports" and refused["citations"] == []

    await ReportService(harbour.store, FLEET, ReportOptions(max_findings=20)).write()
    gannet = (await documents(harbour))["gannet-log"]
    tools = GraphRagTools(harbour, scope=DocumentsScope(document_ids=(gannet,)))
    assert "answer_about_corpus" in tools.names
    payload = (await tools.call("answer_about_corpus", {"question": QUESTION})).to_payload()
    value = payload
    assert value["answered"] is True and "Gannet owned by House Orrin." in value["text"]
    assert {citation["documentId"] for citation in value["citations"]} == {gannet}
    for citation in value["citations"]:
        (chunk,) = list(
            await harbour.store.read(
                "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start", {"id": citation["chunkId"]}
            )
        )
        span = chunk["text"].encode()[citation["startByte"] - chunk["start"] : citation["endByte"] - chunk["start"]]
        assert span.decode() == citation["quote"]
    bad = (await tools.call("answer_about_corpus", {"question": ""})).to_payload()
    assert bad["error"]["code"] in {"invalid-arguments", "empty-question"}
