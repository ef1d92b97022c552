"""Agent tools against the real Neo4j, with an agent loop on the openai SDK and the loopback server.

Three short documents are ingested with the bike ontology (scripted extraction), so
answers, passages, things and facts all come from the graph. The agent is a loop
written here: AsyncOpenAI asks the loopback server, which is scripted to call
answer_from_documents first and then to repeat the tool's citations; the toolkit's own
answer call goes to the same server, told apart by its JSON schema.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from openai import AsyncOpenAI

from graphrag_orm import GraphRag, GraphRagOptions, Sources
from graphrag_orm.chat import OpenAIChat
from graphrag_orm.chat.evidence_block import parse_evidence
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import RunStatus
from graphrag_orm.ontology import entity_id
from graphrag_orm.retrieval import DocumentsScope
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.tools import INSTRUCTIONS, GraphRagTools, ToolOptions, ToolResult, ToolTrail
from tests.integration.knowledge_support import BIKES, entity, fact, ontology_schema, scripted
from tests.support.openai_server import OpenAIServer, ScriptedReply, ScriptedToolCall
from tests.support.tracing import captured_spans

BULLETIN = (
    "Service bulletin SB-2026-07: Kestrel Components recalls brake caliper BC-310 after a seal defect.\n\n"
    "Every caliper made before May 2026 goes back to the dealer for a free replacement seal.\n"
)
KIT = (
    "Brake kit BK-7: two BC-310 calipers and two BL-20 levers.\n\n"
    "The BL-20 lever is “made and supplied” by Kestrel Components.\n"
)
TRAIL = "Trail 5 spec sheet: full-suspension frame and brake kit BK-7.\n"
LEVER_QUESTION = "Who supplies the BL-20 lever?"
#: The model's copy uses straight quotes; the stored text has curly ones.
LEVER_QUOTE = '"made and supplied" by Kestrel Components'
STORED_LEVER_QUOTE = "“made and supplied” by Kestrel Components"
UNANSWERABLE = "What is the capital of Peru?"


def extraction_for(passage: str) -> dict[str, Any]:
    if passage.startswith("Service bulletin"):
        return {
            "entities": [
                entity("Bulletin", "SB-2026-07"),
                entity("Supplier", "Kestrel Components"),
                entity("Part", "BC-310"),
            ],
            "relationships": [
                fact("SB-2026-07", "COVERS", "BC-310"),
                fact("BC-310", "SUPPLIED_BY", "Kestrel Components"),
            ],
        }
    if passage.startswith("Brake kit"):
        return {
            "entities": [entity("Part", "BK-7"), entity("Part", "BC-310"), entity("Part", "BL-20")],
            "relationships": [fact("BK-7", "HAS_PART", "BC-310"), fact("BK-7", "HAS_PART", "BL-20")],
        }
    if passage.startswith("The BL-20"):
        return {
            "entities": [entity("Part", "BL-20"), entity("Supplier", "Kestrel Components")],
            "relationships": [fact("BL-20", "SUPPLIED_BY", "Kestrel Components")],
        }
    if passage.startswith("Trail 5"):
        return {
            "entities": [entity("Bike", "Trail 5"), entity("Part", "BK-7")],
            "relationships": [fact("Trail 5", "HAS_PART", "BK-7")],
        }
    return {"entities": [], "relationships": []}


@dataclass(frozen=True)
class Library:
    rag: GraphRag
    documents: dict[str, str]  # source name -> document id


@contextlib.asynccontextmanager
async def library(store: Store, settings: ConnectionSettings, server: OpenAIServer) -> AsyncIterator[Library]:
    """The three documents ingested with the ontology; answers go to the loopback server."""
    async with ontology_schema(store, BIKES):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=OpenAIChat("answer-model", base_url=server.url, api_key="sk-test"),
            extraction_chat=scripted(extraction_for),
            ontology=BIKES,
            options=GraphRagOptions(chunking=ChunkerOptions(max_utf8_bytes=100, overlap_paragraphs=0)),
        )
        await rag.connect(settings, neomodel=False)
        try:
            sources = [Sources.text("bulletin", BULLETIN), Sources.text("kit", KIT), Sources.text("trail", TRAIL)]
            receipt = await rag.ingestion.ingest(sources)
            assert receipt.status == RunStatus.COMPLETED and receipt.chunks_written == 5, receipt
            rows = await store.read("MATCH (d:Document) RETURN d.sourceUri AS uri, d.id AS id")
            documents = {row["uri"].rsplit("/", 1)[-1].removeprefix("text:"): row["id"] for row in rows}
            assert sorted(documents) == ["bulletin", "kit", "trail"], documents
            yield Library(rag, documents)
        finally:
            await rag.close()


@pytest.fixture
async def books(
    graph: None, store: Store, neo4j_settings: ConnectionSettings, openai_server: OpenAIServer
) -> AsyncIterator[Library]:
    async with library(store, neo4j_settings, openai_server) as found:
        yield found


# --- the scripted models ------------------------------------------------------------------


def toolkit_answer(body: dict[str, Any]) -> str:
    """The toolkit's answer call: cite the lever passage when it is evidence for the lever question, else decline."""
    question_and_evidence = body["messages"][-1]["content"]
    if LEVER_QUESTION in question_and_evidence:
        for chunk_id, text in parse_evidence(question_and_evidence):
            if "made and supplied" in text:
                citation = {"chunkId": chunk_id, "quote": LEVER_QUOTE}
                return json.dumps({"answer": "Kestrel Components.", "citations": [citation], "insufficient": None})
    return json.dumps({"answer": None, "citations": None, "insufficient": "nothing here about that"})


def agent_turn(body: dict[str, Any]) -> str | ScriptedReply:
    """The agent: ask answer_from_documents, then repeat its answer and citations (or its refusal)."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "user":
        arguments = json.dumps({"question": last["content"]})
        return ScriptedReply(tool_calls=[ScriptedToolCall("answer_from_documents", arguments, id="call_1")])
    result = json.loads(last["content"])
    if not result.get("answered"):
        return f"The documents don't answer this question ({result.get('reason')})."
    cited = "; ".join(
        f"{c['quote']} [document {c['documentId'][:12]}, bytes {c['startByte']}-{c['endByte']}]"
        for c in result["citations"]
    )
    return f"{result['text']} Sources: {cited}"


def respond(body: dict[str, Any]) -> str | ScriptedReply:
    return agent_turn(body) if "tools" in body else toolkit_answer(body)


# --- the agent loop -------------------------------------------------------------------------


async def run_agent(
    server: OpenAIServer, tools: GraphRagTools, question: str, *, stream: bool = False
) -> tuple[str, list[ToolResult]]:
    """A plain tool loop: send the tools, run each call, send the results back, until the model answers."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": question},
    ]
    results: list[ToolResult] = []
    async with AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=0) as sdk:
        for _ in range(4):
            text, calls = await (_streamed if stream else _whole)(sdk, messages, tools.definitions())
            if not calls:
                return text, results
            messages.append(
                {
                    "role": "assistant",
                    "content": text or None,
                    "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                        for call_id, name, arguments in calls
                    ],
                }
            )
            for call_id, name, arguments in calls:
                result = await tools.call(name, arguments)
                results.append(result)
                messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result.to_payload())})
    raise AssertionError("the agent never gave its final answer")


async def _whole(
    sdk: AsyncOpenAI, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[str, list[tuple[str, str, str]]]:
    reply = await sdk.chat.completions.create(model="agent", messages=messages, tools=tools)  # type: ignore[arg-type]
    message = reply.choices[0].message
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or [] if c.type == "function"]
    return message.content or "", calls


async def _streamed(
    sdk: AsyncOpenAI, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[str, list[tuple[str, str, str]]]:
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    stream = await sdk.chat.completions.create(model="agent", messages=messages, tools=tools, stream=True)  # type: ignore[arg-type]
    async for chunk in stream:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for delta in choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, ["", "", ""])
                entry[0] = delta.id or entry[0]
                if delta.function is not None:
                    entry[1] += delta.function.name or ""
                    entry[2] += delta.function.arguments or ""
    return "".join(text), [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]


async def stored_span(store: Store, chunk_id: str, start: int, end: int) -> tuple[str, str]:
    """The document id and the stored text at ``[start, end)`` of the chunk, read from the database."""
    row = (
        await store.read(
            "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start, c.documentId AS document",
            {"id": chunk_id},
        )
    ).single()
    assert row is not None, chunk_id
    data = row["text"].encode("utf-8")
    return row["document"], data[start - row["start"] : end - row["start"]].decode("utf-8")


# --- answer_from_documents ---------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_agent_answers_through_the_tool_with_citations_located_in_the_stored_bytes(
    books: Library, store: Store, openai_server: OpenAIServer, stream: bool
) -> None:
    openai_server.chat_responder = respond
    trail = ToolTrail()
    tools = GraphRagTools(books.rag, trail=trail)
    final, results = await run_agent(openai_server, tools, LEVER_QUESTION, stream=stream)

    (result,) = results
    payload = result.to_payload()
    assert result.tool == "answer_from_documents" and not result.is_error
    assert payload["answered"] is True and payload["text"] == "Kestrel Components."
    (citation,) = payload["citations"]
    assert citation["quote"] == STORED_LEVER_QUOTE  # the stored text, not the model's straight quotes
    assert "page" not in citation  # a text document has no pages
    document, stored = await stored_span(store, citation["chunkId"], citation["startByte"], citation["endByte"])
    assert (document, stored) == (books.documents["kit"], citation["quote"])
    assert KIT.encode()[citation["startByte"] : citation["endByte"]].decode() == STORED_LEVER_QUOTE

    assert STORED_LEVER_QUOTE in final and "Kestrel Components." in final
    assert f"bytes {citation['startByte']}-{citation['endByte']}" in final

    (call,) = trail.calls
    assert call.tool == "answer_from_documents" and call.arguments == {"question": LEVER_QUESTION}
    assert call.code is None
    assert [(e.document_id, e.chunk_id, e.start_byte, e.end_byte) for e in call.evidence] == [
        (document, citation["chunkId"], citation["startByte"], citation["endByte"])
    ]
    recorded = call.to_json()
    assert "made and supplied" not in recorded and "Kestrel" not in recorded  # no document text, no answer


async def test_an_unanswerable_question_is_refused_and_the_agent_says_so(
    books: Library, openai_server: OpenAIServer
) -> None:
    openai_server.chat_responder = respond
    trail = ToolTrail()
    final, (result,) = await run_agent(openai_server, GraphRagTools(books.rag, trail=trail), UNANSWERABLE)
    payload = result.to_payload()
    assert not result.is_error
    assert payload["answered"] is False and payload["reason"] == "model-declined"
    assert payload["citations"] == [] and payload["text"] is None and payload["note"]
    assert final == "The documents don't answer this question (model-declined)."
    assert trail.calls[0].code == "model-declined" and trail.calls[0].evidence == ()


async def test_the_applications_scope_holds_whatever_the_agent_asks(
    books: Library, openai_server: OpenAIServer
) -> None:
    openai_server.chat_responder = respond
    outside = GraphRagTools(books.rag, scope=DocumentsScope(document_ids=(books.documents["trail"],)))
    result = await outside.call("answer_from_documents", {"question": LEVER_QUESTION})
    assert result.to_payload()["answered"] is False
    assert result.to_payload()["reason"] == "model-declined"  # the lever passage was never evidence
    empty = GraphRagTools(books.rag, scope=DocumentsScope(document_ids=("0" * 64,)))
    asked = len(openai_server.requests)
    refused = await empty.call("answer_from_documents", {"question": LEVER_QUESTION})
    assert refused.to_payload()["reason"] == "no-evidence"
    assert len(openai_server.requests) == asked  # no model call for an empty scope


# --- search_documents --------------------------------------------------------------------------


async def test_search_returns_passages_labelled_as_evidence_with_their_stored_text_and_spans(
    books: Library, store: Store
) -> None:
    trail = ToolTrail()
    result = await GraphRagTools(books.rag, trail=trail).call("search_documents", {"query": "BL-20 lever supplier"})
    payload = result.to_payload()
    assert payload["kind"] == "passages" and payload["label"] == "evidence to read and quote, not an answer"
    passages = payload["passages"]
    assert 1 <= len(passages) <= 5
    for passage in passages:
        document, stored = await stored_span(store, passage["chunkId"], passage["startByte"], passage["endByte"])
        assert document == passage["documentId"] and stored == passage["text"]
    assert any("made and supplied" in passage["text"] for passage in passages)
    (call,) = trail.calls
    assert [e.chunk_id for e in call.evidence] == [p["chunkId"] for p in passages]
    assert "made and supplied" not in call.to_json()


async def test_a_search_limit_reached_is_reported(books: Library) -> None:
    result = await GraphRagTools(books.rag).call("search_documents", '{"query": "brake caliper lever kit", "limit": 1}')
    payload = result.to_payload()
    assert len(payload["passages"]) == 1
    assert {"name": "MaxItems", "value": 1} in payload["limitsReached"]


async def test_search_stays_inside_the_scope(books: Library) -> None:
    kit = books.documents["kit"]
    tools = GraphRagTools(books.rag, scope=DocumentsScope(document_ids=(kit,)))
    result = await tools.call("search_documents", {"query": "Service bulletin SB-2026-07 recall", "limit": 20})
    assert {p["documentId"] for p in result.to_payload()["passages"]} == {kit}


# --- find_things and related_facts --------------------------------------------------------------


async def test_find_things_reads_the_names_index_and_filters_by_kind(books: Library) -> None:
    trail = ToolTrail()
    tools = GraphRagTools(books.rag, trail=trail)
    found = (await tools.call("find_things", {"name": "BC-310"})).to_payload()
    assert found["things"][0]["thingId"] == entity_id("Part", "BC-310")
    assert found["things"][0]["kind"] == "Part" and found["things"][0]["name"] == "BC-310"
    kestrel = (await tools.call("find_things", {"name": "kestrel", "kind": "Supplier"})).to_payload()
    assert [t["name"] for t in kestrel["things"]] == ["Kestrel Components"]
    none = (await tools.call("find_things", {"name": "BC-310", "kind": "Supplier"})).to_payload()
    assert none["things"] == [] and none["limitsReached"] == []
    punctuation = (await tools.call("find_things", {"name": "?!*"})).to_payload()
    assert punctuation["things"] == []
    assert trail.calls[0].thing_ids[0] == entity_id("Part", "BC-310")


async def test_find_things_reports_more_than_it_returns(books: Library) -> None:
    tools = GraphRagTools(books.rag, ToolOptions(max_things=1))
    payload = (await tools.call("find_things", {"name": "BC-310 BL-20 BK-7"})).to_payload()
    assert len(payload["things"]) == 1
    assert payload["limitsReached"] == [{"name": "MaxItems", "value": 1}]


async def test_related_facts_lists_the_facts_of_a_thing_with_the_documents_that_state_them(books: Library) -> None:
    trail = ToolTrail()
    tools = GraphRagTools(books.rag, trail=trail)
    part = entity_id("Part", "BC-310")
    payload = (await tools.call("related_facts", {"thing_id": part})).to_payload()
    assert payload["found"] is True and payload["thingId"] == part
    facts = {(f["sourceName"], f["type"], f["targetName"]): f["documentIds"] for f in payload["facts"]}
    assert facts == {
        ("BK-7", "HAS_PART", "BC-310"): [books.documents["kit"]],
        ("SB-2026-07", "COVERS", "BC-310"): [books.documents["bulletin"]],
        ("BC-310", "SUPPLIED_BY", "Kestrel Components"): [books.documents["bulletin"]],
    }
    for f in payload["facts"]:
        assert part in (f["sourceId"], f["targetId"])
    (call,) = trail.calls
    assert {e.document_id for e in call.evidence} == {books.documents["kit"], books.documents["bulletin"]}
    assert entity_id("Supplier", "Kestrel Components") in call.thing_ids


async def test_related_facts_reports_a_limit_and_an_unknown_thing(books: Library) -> None:
    tools = GraphRagTools(books.rag, ToolOptions(max_facts=1))
    payload = (await tools.call("related_facts", {"thing_id": entity_id("Part", "BC-310")})).to_payload()
    assert len(payload["facts"]) == 1
    assert payload["limitsReached"] == [{"name": "MaxFacts", "value": 1}]
    unknown = (await tools.call("related_facts", {"thing_id": "f" * 64})).to_payload()
    assert unknown == {"kind": "facts", "thingId": "f" * 64, "found": False, "facts": [], "limitsReached": []}


async def test_things_and_facts_stay_inside_the_scope(books: Library) -> None:
    kit = books.documents["kit"]
    tools = GraphRagTools(books.rag, scope=DocumentsScope(document_ids=(kit,)))
    assert (await tools.call("find_things", {"name": "SB-2026-07"})).to_payload()["things"] == []
    assert [t["name"] for t in (await tools.call("find_things", {"name": "Kestrel"})).to_payload()["things"]] == [
        "Kestrel Components"
    ]
    payload = (await tools.call("related_facts", {"thing_id": entity_id("Part", "BC-310")})).to_payload()
    assert [(f["sourceName"], f["type"], f["documentIds"]) for f in payload["facts"]] == [("BK-7", "HAS_PART", [kit])]
    kestrel = (
        await tools.call("related_facts", {"thing_id": entity_id("Supplier", "Kestrel Components")})
    ).to_payload()
    assert [(f["sourceName"], f["documentIds"]) for f in kestrel["facts"]] == [("BL-20", [kit])]


# --- spans ----------------------------------------------------------------------------------------


async def test_a_tool_call_is_a_span_around_the_answer_with_counts_and_no_text(
    books: Library, openai_server: OpenAIServer
) -> None:
    openai_server.chat_responder = respond
    tools = GraphRagTools(books.rag)
    with captured_spans() as exporter:
        await tools.call("answer_from_documents", {"question": LEVER_QUESTION})
        await tools.call("related_facts", {"thing_id": entity_id("Part", "BC-310")})
    spans = exporter.get_finished_spans()
    tool_spans = [s for s in spans if s.name == "GraphRag.Tool"]
    assert len(tool_spans) == 2
    answer_tool, facts_tool = tool_spans
    (answer_span,) = [s for s in spans if s.name == "GraphRag.Answer"]
    assert answer_span.parent is not None and answer_tool.context is not None
    assert answer_span.parent.span_id == answer_tool.context.span_id
    assert answer_tool.attributes is not None and facts_tool.attributes is not None
    assert answer_tool.attributes["graphrag.tool"] == "answer_from_documents"
    assert answer_tool.attributes["graphrag.citations"] == 1
    assert answer_tool.attributes["graphrag.disposition"] == "Answered"
    assert facts_tool.attributes["graphrag.facts"] == 3
    for span in tool_spans:
        values = " ".join(str(v) for v in span.attributes.values())  # type: ignore[union-attr]
        assert "Kestrel" not in values and "BL-20" not in values
