"""The report writers without a database: the extractive stand-in's choices and the strict reading of a model's reply
(a report, or a map or reduce reply of a global answer, whole or cut at the output limit)."""

from __future__ import annotations

import json

import pytest

from graphrag_orm.chat import OpenAIChat, ScriptedChat
from graphrag_orm.communities import ExtractiveReportWriter, ReportInput, ReportOptions
from graphrag_orm.communities.global_model import parse_cut_points, parse_points
from graphrag_orm.communities.writers import (
    MAX_FINDING_CITATIONS,
    MAX_TITLE_CHARS,
    REPORT_SCHEMA_NAME,
    ChatReportWriter,
    FactPassage,
    ReportFact,
    parse_cut_report,
    parse_report,
)
from graphrag_orm.evidence import EvidenceItem
from tests.support.openai_server import OpenAIServer

TEXT = "# Brake kit BK-7\n\nBrake kit BK-7 is sold to shops.\n\nIt holds two BC-310 calipers. Nothing else."


def passage(text: str = TEXT, chunk_id: str = "c1") -> EvidenceItem:
    return EvidenceItem(
        chunk_id=chunk_id,
        document_id="d1",
        source_uri="",
        text=text,
        start_byte=0,
        end_byte=len(text.encode()),
        score=0,
    )


def source(*facts: ReportFact) -> ReportInput:
    return ReportInput("community-1", 0, ("BK-7", "BC-310", "BL-20", "Kestrel"), facts, (passage(),))


async def test_the_stand_in_cites_a_sentence_naming_both_ends_else_one_sentence_for_each() -> None:
    both = ReportFact("BK-7", "HAS_PART", "BC-310", 1, (FactPassage("c1", ("BK-7",), ("BC-310",)),))
    draft = await ExtractiveReportWriter().write(source(both))
    assert draft.title == "BK-7, BC-310, BL-20 and 1 more" and draft.calls == 0
    (finding,) = draft.findings
    # No sentence names both, so the first naming each: the heading, then the sentence with BC-310.
    assert finding.text == "BK-7 has part BC-310."
    assert finding.citations == (("c1", "# Brake kit BK-7"), ("c1", "It holds two BC-310 calipers."))
    together = ReportFact("BK-7", "SOLD", "shops", 1, (FactPassage("c1", ("BK-7",), ("shops",)),))
    (sold,) = (await ExtractiveReportWriter().write(source(together))).findings
    assert sold.citations == (("c1", "Brake kit BK-7 is sold to shops."),)
    absent = ReportFact("BK-7", "HAS_PART", "BL-20", 1, (FactPassage("c1", ("BK-7",), ("BL-20",)),))
    assert (await ExtractiveReportWriter().write(source(absent))).findings == ()


def reply(**changes: object) -> str:
    body: dict[str, object] = {
        "title": "Brake kits",
        "findings": [{"text": "BK-7 holds calipers.", "citations": [{"chunkId": "c1", "quote": "two BC-310"}]}],
    }
    body.update(changes)
    return json.dumps(body)


def test_a_reply_is_read_strictly() -> None:
    draft = parse_report(reply(), max_findings=8)
    assert draft.problem is None and draft.title == "Brake kits"
    assert draft.findings[0].citations == (("c1", "two BC-310"),)
    bad_citation = [{"text": "x", "citations": [{"chunkId": "c1", "quote": "q"}] * (MAX_FINDING_CITATIONS + 1)}]
    for text in (
        "not json",
        "[]",
        reply(extra=1),
        reply(title=""),
        reply(title="t" * (MAX_TITLE_CHARS + 1)),
        reply(findings={}),
        reply(findings=[{"text": "x"}]),
        reply(findings=[{"text": "", "citations": []}]),
        reply(findings=bad_citation),
        reply(findings=[{"text": "x", "citations": [{"chunkId": 1, "quote": "q"}]}]),
    ):
        read = parse_report(text, max_findings=8)
        assert read.problem is not None and read.findings == (), text
    many = [{"text": f"f{i}", "citations": []} for i in range(20)]
    assert len(parse_report(reply(findings=many), max_findings=3).findings) == 4, "one over, so the bound is seen"


async def test_the_chat_writer_sends_one_bounded_strict_request_and_reads_the_reply() -> None:
    chat = ScriptedChat(lambda request: reply())
    options = ReportOptions(max_output_tokens=300, max_findings=2)
    writer = ChatReportWriter(chat, options)
    fact = ReportFact("BK-7", "HAS_PART", "BC-310", 1, ())
    draft = await writer.write(source(fact))
    assert draft.calls == 1 and draft.title == "Brake kits" and draft.problem is None
    (request,) = chat.calls
    assert request.schema_name == REPORT_SCHEMA_NAME and request.strict and request.max_output_tokens == 300
    assert '"chunkId":"c1"' in request.messages[-1].content and "at most 2 findings" in request.messages[0].content
    assert writer.request_bytes(source(fact)) > len(TEXT)


@pytest.mark.parametrize("bad", ["{}", "null"])
async def test_an_unreadable_reply_is_a_problem_not_an_error(bad: str) -> None:
    draft = await ChatReportWriter(ScriptedChat(lambda request: bad)).write(source())
    assert draft.problem is not None and draft.calls == 1


def test_a_reply_cut_at_the_output_limit_keeps_the_findings_it_finished() -> None:
    first = {"text": "BK-7 holds calipers.", "citations": [{"chunkId": "c1", "quote": "two BC-310"}]}
    second = {"text": "BK-7 is sold.", "citations": [{"chunkId": "c1", "quote": "sold to shops"}]}
    whole = json.dumps({"title": "Brake kits", "findings": [first, second, first]})
    cut_in_third = whole[: whole.rindex('"quote"') + 5]  # inside the third finding's last citation
    draft = parse_cut_report(cut_in_third, max_findings=8)
    assert draft.problem is None and draft.title == "Brake kits" and draft.cut == 1
    assert [f.text for f in draft.findings] == ["BK-7 holds calipers.", "BK-7 is sold."]
    # Cut just after the second finding closed: the second is the last begun, so it is left out too.
    after_second = whole[: whole.index("]}", whole.index("sold to shops")) + 2]
    assert [f.text for f in parse_cut_report(after_second, max_findings=8).findings] == ["BK-7 holds calipers."]
    for text in (
        whole[: whole.index("Brake") + 3],  # inside the title
        whole[: whole.index("two BC")],  # inside the first finding: nothing finished
        "not json at all",
        json.dumps({"title": "Brake kits", "findings": [{"text": "x"}, first]})[:-3],  # a finished one is not a finding
    ):
        read = parse_cut_report(text, max_findings=8)
        assert read.problem is not None and read.findings == () and read.problem.startswith("the reply was cut"), text


async def test_the_chat_writer_reads_a_cut_reply_as_far_as_it_went(openai_server: OpenAIServer) -> None:
    finding = {"text": "BK-7 holds calipers.", "citations": [{"chunkId": "c1", "quote": "two BC-310"}]}
    whole = json.dumps({"title": "Brake kits", "findings": [finding, finding]})
    openai_server.chat_responder = lambda body: whole[:-20]
    openai_server.finish_reason = "length"
    async with OpenAIChat("m", base_url=openai_server.url, api_key="k") as chat:
        draft = await ChatReportWriter(chat).write(source())
    assert draft.problem is None and draft.cut == 1 and len(draft.findings) == 1 and draft.calls == 1


def test_a_map_or_reduce_reply_cut_at_the_output_limit_keeps_the_entries_it_finished() -> None:
    entries = [{"text": f"Point {i}.", "findings": [f"F{i}"]} for i in (1, 2, 3)]
    whole = json.dumps({"points": entries})
    read = parse_cut_points(whole[: whole.index("Point 3") + 4], "points")
    assert not isinstance(read, str) and [p.text for p in read] == ["Point 1.", "Point 2."]
    assert [p.findings for p in read] == [("F1",), ("F2",)]
    assert parse_cut_points(whole, "points") != parse_points(whole, "points"), "the last begun is never read"
    for text in (whole[: whole.index("Point 1")], "not json", '{"claims": [', json.dumps({"points": "x"})):
        assert isinstance(parse_cut_points(text, "points"), str), text
    bad = json.dumps({"points": [{"text": "x", "findings": "F1"}, entries[0]]})
    assert isinstance(parse_cut_points(bad, "points"), str), "what it finished is read strictly"
