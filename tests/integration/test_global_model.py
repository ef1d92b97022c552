"""A chat model's global answers over real HTTP: the map and reduce of the loopback OpenAI-compatible server.

Over the harbour sample (32 pages, an ontology) with the offline report writer, on the real
Neo4j. The loopback model reads the blocks it is sent, as a model would, and replies as each
test scripts it; every assertion on what the model was shown reads the requests the server
received. Nothing here patches an SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from examples.harbour.fleet import FLEET
from graphrag_orm import GraphRag
from graphrag_orm.chat import OpenAIChat
from graphrag_orm.codes import ErrorCode, GlobalRefusal, LimitName
from graphrag_orm.communities import (
    GLOBAL_NOTE,
    GlobalAnswer,
    GlobalAnswers,
    GlobalOptions,
    ReportOptions,
    ReportService,
)
from graphrag_orm.errors import ModelCallFailed
from graphrag_orm.retrieval.scope import DocumentsScope
from graphrag_orm.tools import GraphRagTools
from tests.integration.test_community_reports import harbour  # noqa: F401 (the fixture)
from tests.integration.test_global_surfaces import documents
from tests.support.openai_server import OpenAIServer
from tests.support.tracing import captured_spans

QUESTION = "Which ships are owned by House Orrin?"
CHAT = "/v1/chat/completions"
OWNED = "owned by House Orrin"


def blocks(body: dict[str, Any]) -> tuple[str, str, Any]:
    """The question, and the label and value of the block after it, as a model reads its prompt."""
    lines = body["messages"][-1]["content"].split("\n")
    assert lines[0] == "<question>" and lines[2] == "</question>"
    return json.loads(lines[1]), lines[3].strip("<>"), json.loads(lines[4])


@dataclass
class Model:
    """The loopback model: a map point per finding naming ``wanted``, a claim per partial answer.

    ``extra_map`` / ``extra_reduce`` add entries to each reply; ``invent`` adds an id never
    shown to each map point; ``raw_map`` / ``raw_reduce`` replace a reply's text outright.
    """

    wanted: str = OWNED
    invent: bool = False
    extra_map: list[dict[str, Any]] = field(default_factory=list)
    extra_reduce: list[dict[str, Any]] = field(default_factory=list)
    raw_map: str | None = None
    raw_reduce: str | None = None
    shown: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, body: dict[str, Any]) -> str:
        _question, label, value = blocks(body)
        if label == "reports":
            if self.raw_map is not None:
                return self.raw_map
            points = []
            for report in value:
                for finding in report["findings"]:
                    self.shown.append(finding)
                    if self.wanted in finding["text"]:
                        ids = [finding["id"], "F0"] if self.invent else [finding["id"]]
                        points.append({"text": finding["text"], "findings": ids})
            return json.dumps({"points": points + self.extra_map})
        assert label == "partial_answers"
        if self.raw_reduce is not None:
            return self.raw_reduce
        claims = [{"text": entry["text"], "findings": entry["findings"]} for entry in value]
        return json.dumps({"claims": claims + self.extra_reduce})


def sent(server: OpenAIServer, label: str) -> list[Any]:
    """The blocks of the requests received with ``label`` (``reports`` or ``partial_answers``)."""
    found = []
    for request in server.requests_to(CHAT):
        _question, shown, value = blocks(request.body)
        if shown == label:
            found.append(value)
    return found


async def ask(rag: GraphRag, server: OpenAIServer, options: GlobalOptions | None = None, **kwargs: Any) -> GlobalAnswer:
    async with OpenAIChat("test-model", base_url=server.url, api_key="test-key") as chat:
        corpus = GlobalAnswers(rag.store, FLEET, options, chat=chat, resolver=rag.retriever.resolve_scope)
        return await corpus.answer(kwargs.pop("question", QUESTION), **kwargs)


async def assert_stored_bytes(rag: GraphRag, answer: GlobalAnswer) -> None:
    for citation in answer.citations:
        (chunk,) = list(
            await rag.store.read(
                "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start", {"id": citation.chunk_id}
            )
        )
        span = chunk["text"].encode()[citation.start_byte - chunk["start"] : citation.end_byte - chunk["start"]]
        assert span.decode() == citation.quote


async def write_reports(rag: GraphRag) -> None:
    await ReportService(rag.store, FLEET, ReportOptions(max_findings=20)).write()


async def test_a_model_answer_is_mapped_reduced_and_cites_the_findings_verified_now(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    openai_server.chat_responder = Model().reply
    with captured_spans() as spans:
        answered = await ask(harbour, openai_server)
    maps, reduces = sent(openai_server, "reports"), sent(openai_server, "partial_answers")
    assert answered.refused is None and answered.writer == "test-model" and answered.answer is not None
    assert len(reduces) == 1 and answered.calls == len(maps) + 1 == len(openai_server.requests_to(CHAT))
    assert openai_server.requests_to(CHAT)[-1].body["messages"][-1]["content"].find("<partial_answers>") > 0
    for ship in ("Gannet", "Skua", "Petrel"):
        assert f"{ship} owned by House Orrin." in answered.answer
    assert not answered.answer.endswith(GLOBAL_NOTE) and "Selkie carries tar." not in answered.answer
    assert answered.findings_dropped == answered.findings_invented == answered.unreadable_replies == 0
    assert answered.input_tokens == 11 * answered.calls and answered.output_tokens == 7 * answered.calls
    # Every claim rests on located spans; every span is the stored bytes now.
    assert answered.claims and all(claim.citations for claim in answered.claims)
    for claim in answered.claims:
        ship = claim.text.split(" ", 1)[0]
        assert any(ship in citation.quote for citation in claim.citations)
    await assert_stored_bytes(harbour, answered)
    # Strict JSON, bounded replies; every report shown once, with unique finding ids.
    body = openai_server.requests_to(CHAT)[0].body
    assert body["response_format"]["json_schema"]["strict"] is True and body["max_completion_tokens"] == 800
    assert body["response_format"]["json_schema"]["name"] == "global_map"
    ids = [finding["id"] for block in maps for report in block for finding in report["findings"]]
    assert len(ids) == len(set(ids)) == answered.findings_shown
    assert all(len(block) <= GlobalOptions().map_reports_per_call for block in maps)
    (traced,) = [s for s in spans.get_finished_spans() if s.name == "GraphRag.GlobalAnswer"]
    attributes = dict(traced.attributes or {})
    assert attributes["graphrag.calls"] == answered.calls and attributes["graphrag.phase"] == "model"
    assert QUESTION not in json.dumps(attributes, default=str)


async def test_an_invented_finding_id_is_dropped_and_counted(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    model = Model(
        invent=True,
        extra_map=[{"text": "The Kraken is owned by House Orrin.", "findings": ["F0"]}],
        extra_reduce=[{"text": "House Orrin also owns the Leviathan.", "findings": ["F99999"]}],
    )
    openai_server.chat_responder = model.reply
    answered = await ask(harbour, openai_server)
    maps = sent(openai_server, "reports")
    points = sum(1 for finding in model.shown if OWNED in finding["text"])
    # One invented id per real point, one per map reply's extra point, one in the reduce.
    assert answered.findings_invented == points + len(maps) + 1
    assert answered.refused is None and "Gannet owned by House Orrin." in (answered.answer or "")
    assert "Kraken" not in (answered.answer or "") and "Leviathan" not in (answered.answer or "")
    # The reduce was never shown the point that cited only an invented id.
    (partial,) = sent(openai_server, "partial_answers")
    assert all("Kraken" not in entry["text"] and "F0" not in entry["findings"] for entry in partial)

    # A model whose every claim cites ids it was never shown answers nothing.
    openai_server.requests.clear()
    openai_server.chat_responder = Model(
        raw_reduce=json.dumps({"claims": [{"text": "Made up.", "findings": ["F0"]}]})
    ).reply
    refused = await ask(harbour, openai_server)
    assert refused.refused == GlobalRefusal.NO_VERIFIED_CLAIM and refused.answer is None and refused.citations == ()
    assert refused.findings_invented == 1


async def test_a_quote_whose_chunk_changed_after_the_report_was_written_is_dropped(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    changed = await harbour.store.execute(
        "MATCH (c:Chunk) WHERE c.text CONTAINS 'The Skua is owned by House Orrin' "
        "SET c.text = replace(c.text, 'The Skua is owned by House Orrin', 'The Skua was sold by House Orrin') "
        "RETURN count(c) AS changed"
    )
    assert [row["changed"] for row in changed] == [1]
    openai_server.chat_responder = Model().reply
    answered = await ask(harbour, openai_server)
    assert answered.refused is None and answered.findings_dropped == 1
    assert "Gannet owned by House Orrin." in (answered.answer or "")
    assert "Skua owned by House Orrin." not in (answered.answer or "")
    assert all("Skua" not in citation.quote for citation in answered.citations)
    await assert_stored_bytes(harbour, answered)

    # When the only finding the model cites no longer locates, nothing is answered.
    openai_server.chat_responder = Model(wanted="Skua owned by House Orrin").reply
    refused = await ask(harbour, openai_server)
    assert refused.refused == GlobalRefusal.CITATION_NOT_FOUND and refused.findings_dropped == 1
    assert refused.answer is None and refused.citations == ()


async def test_a_decline_is_refused_with_its_code(harbour: GraphRag, openai_server: OpenAIServer) -> None:  # noqa: F811
    await write_reports(harbour)
    openai_server.chat_responder = Model(raw_map=json.dumps({"points": []})).reply
    declined = await ask(harbour, openai_server, question="What did saffron cost at the spring fair?")
    assert declined.refused == GlobalRefusal.MODEL_DECLINED and declined.answer is None
    maps = sent(openai_server, "reports")
    assert maps and sent(openai_server, "partial_answers") == [], "no reduce when the map found nothing"
    assert declined.calls == len(maps)

    openai_server.requests.clear()
    openai_server.chat_responder = Model(raw_reduce=json.dumps({"claims": []})).reply
    reduced = await ask(harbour, openai_server)
    assert reduced.refused == GlobalRefusal.MODEL_DECLINED and len(sent(openai_server, "partial_answers")) == 1


async def test_an_unreadable_reply_is_refused_and_counted(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    openai_server.chat_responder = Model(raw_map="Here are the ships: Gannet, Skua.").reply
    unreadable = await ask(harbour, openai_server)
    assert unreadable.refused == GlobalRefusal.UNREADABLE_REPLY and unreadable.unreadable_replies == unreadable.calls

    openai_server.requests.clear()
    openai_server.chat_responder = Model(raw_reduce='{"claims": [{"text": "x", "findings": "F1"}]}').reply
    reduce = await ask(harbour, openai_server)
    assert reduce.refused == GlobalRefusal.UNREADABLE_REPLY and reduce.unreadable_replies == 1

    # A reply cut at the output limit is read as far as it went: the entries before the last it began.
    openai_server.requests.clear()
    openai_server.chat_responder = Model().reply
    openai_server.finish_reason = "length"
    cut = await ask(harbour, openai_server)
    assert [limit.name for limit in cut.limits_reached] == [LimitName.GLOBAL_OUTPUT_TOKENS]
    whole = Model().reply  # the same points, uncut, for comparison
    openai_server.requests.clear()
    openai_server.finish_reason = "stop"
    openai_server.chat_responder = whole
    full = await ask(harbour, openai_server)
    assert full.refused is None and len(full.claims) >= 3, "three ships, so a cut map and reduce keep some"
    assert cut.refused is None and cut.unreadable_replies == 0 and 0 < len(cut.claims) < len(full.claims)
    assert {claim.text for claim in cut.claims} < {claim.text for claim in full.claims}

    # One that finished no entry is unreadable.
    openai_server.requests.clear()
    openai_server.finish_reason = "length"
    openai_server.chat_responder = Model(raw_map='{"points": [{"text": "The Gannet is ow').reply
    unfinished = await ask(harbour, openai_server)
    assert unfinished.refused == GlobalRefusal.UNREADABLE_REPLY and unfinished.unreadable_replies == unfinished.calls


async def test_the_budget_bounds_calls_and_tokens_and_is_reported(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    openai_server.chat_responder = Model().reply
    one = await ask(harbour, openai_server, GlobalOptions(max_map_calls=1, map_reports_per_call=1))
    maps = sent(openai_server, "reports")
    assert len(maps) == 1 and len(maps[0]) == 1 and one.calls == 2
    assert [limit.name for limit in one.limits_reached] == [LimitName.GLOBAL_MAP_CALLS]
    # The report most like the question goes first: the owners' report.
    assert any(OWNED in finding["text"] for finding in maps[0][0]["findings"])

    openai_server.requests.clear()
    small = await ask(harbour, openai_server, GlobalOptions(max_call_tokens=500, max_map_calls=64))
    assert LimitName.GLOBAL_CALL_TOKENS in [limit.name for limit in small.limits_reached]
    for request in openai_server.requests_to(CHAT):
        shown = sum(len(message["content"].encode()) for message in request.body["messages"])
        assert shown <= 500 * 4 + 64, "a call's input stays within its token bound (four bytes a token)"
    unbounded = len(sent(openai_server, "reports"))
    openai_server.requests.clear()
    full = await ask(harbour, openai_server, GlobalOptions(max_map_calls=64))
    assert full.limits_reached == () and len(sent(openai_server, "reports")) < unbounded


async def test_the_model_is_never_shown_a_finding_citing_outside_the_scope(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    gannet = (await documents(harbour))["gannet-log"]
    rows = await harbour.store.read(
        "MATCH (f:ReportFinding) RETURN f.text AS text, f.quotes AS quotes, f.documentIds AS documents"
    )
    inside = {(row["text"], tuple(row["quotes"])) for row in rows if set(row["documents"]) == {gannet}}
    assert inside and len(inside) < len(rows)
    model = Model()
    openai_server.chat_responder = model.reply
    answered = await ask(harbour, openai_server, scope=DocumentsScope(document_ids=(gannet,)))
    shown = {(finding["text"], tuple(finding["quotes"])) for finding in model.shown}
    assert shown == inside, "only (and every) finding citing the scope alone is shown"
    partial = sent(openai_server, "partial_answers")
    assert all(entry["text"] in {text for text, _ in inside} for block in partial for entry in block)
    assert answered.refused is None and {c.document_id for c in answered.citations} == {gannet}
    assert "Skua" not in (answered.answer or "") and answered.limits_reached == ()

    # A scope no finding lies inside (the tide table states no fact): refused before any call, as offline.
    openai_server.requests.clear()
    tides = (await documents(harbour))["tide-table"]
    assert all(tides not in row["documents"] for row in rows)
    elsewhere = await ask(harbour, openai_server, scope=DocumentsScope(document_ids=(tides,)))
    assert elsewhere.refused == GlobalRefusal.NO_RELEVANT_FINDING and openai_server.requests_to(CHAT) == []


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        (lambda server: server.fail(400), ErrorCode.MODEL_REQUEST_REJECTED),
        (lambda server: server.delay(5, times=20), ErrorCode.MODEL_TIMEOUT),
    ],
)
async def test_a_failed_model_call_is_a_coded_error(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
    fault: Callable[[OpenAIServer], None],
    code: ErrorCode,
) -> None:
    await write_reports(harbour)
    openai_server.chat_responder = Model().reply
    fault(openai_server)
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key", timeout=1) as chat:
        with pytest.raises(ModelCallFailed) as failed:
            await GlobalAnswers(harbour.store, FLEET, GlobalOptions(lanes=1), chat=chat).answer(QUESTION)
    assert failed.value.code == code


async def test_the_facade_and_the_agent_tool_take_the_model_path_with_a_chat_model(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    assert harbour.global_answers is not None and harbour.global_answers.chat is None, "a stand-in answers offline"
    openai_server.chat_responder = Model().reply
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        rag = GraphRag(embedding_set=harbour.embedding_set, embedder=harbour.embedder, chat=chat, ontology=FLEET)
        rag.store.bind(harbour.store.driver, harbour.store.database)
        assert rag.global_answers is not None and rag.global_answers.chat is chat
        gannet = (await documents(harbour))["gannet-log"]
        tools = GraphRagTools(rag, scope=DocumentsScope(document_ids=(gannet,)))
        payload = (await tools.call("answer_about_corpus", {"question": QUESTION})).to_payload()
    assert payload["answered"] is True and "Gannet owned by House Orrin." in payload["text"]
    assert GLOBAL_NOTE not in payload["text"] and {c["documentId"] for c in payload["citations"]} == {gannet}
    assert len(sent(openai_server, "partial_answers")) == 1
