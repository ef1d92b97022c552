"""Community reports over the harbour sample (32 pages, an ontology), written to and read from the real Neo4j.

Every stored finding's citation is checked against the stored chunk bytes; the model
writer is tested over real HTTP against the loopback OpenAI server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from examples.harbour.fleet import FACTS, FLEET, extraction_reply, pages
from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import OpenAIChat, ScriptedChat
from graphrag_orm.chat.evidence_block import parse_evidence
from graphrag_orm.codes import ErrorCode, GlobalRefusal, HealthFinding, LimitName, ReportDrop
from graphrag_orm.communities import (
    EXTRACTIVE_WRITER,
    GLOBAL_NOTE,
    ChatReportWriter,
    CommunityService,
    DraftFinding,
    ExtractiveReportWriter,
    GlobalAnswers,
    GlobalOptions,
    ReportDraft,
    ReportInput,
    ReportListing,
    ReportOptions,
    ReportService,
)
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ModelCallFailed
from graphrag_orm.maintenance import ResetScope
from graphrag_orm.resolution import Resolution, Suggestion
from graphrag_orm.store import Store
from tests.integration.knowledge_support import ontology_schema
from tests.support.openai_server import OpenAIServer


@pytest.fixture
async def harbour(store: Store, graph: None) -> AsyncIterator[GraphRag]:
    async with ontology_schema(store, FLEET):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ScriptedChat(extraction_reply),
            ontology=FLEET,
        )
        rag.store.bind(store.driver, store.database)
        receipt = await rag.ingestion.ingest(
            [Sources.file(p, uri=f"https://example.org/harbour/{p.stem}") for p in pages()]
        )
        assert receipt.failed == 0 and len(pages()) >= 30
        built = await CommunityService(rag.store, FLEET).build()
        assert built.communities >= 3
        yield rag


async def assert_every_citation_is_the_stored_bytes(rag: GraphRag, listing: ReportListing) -> int:
    """Each citation's quote is the chunk's stored text at its byte span; returns the citations checked."""
    checked = 0
    for report in listing.reports:
        assert report.findings, "a stored report has at least one finding"
        for finding in report.findings:
            assert finding.citations
            for citation in finding.citations:
                (chunk,) = list(
                    await rag.store.read(
                        "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start, c.documentId AS doc",
                        {"id": citation.chunk_id},
                    )
                )
                stored = chunk["text"].encode("utf-8")[
                    citation.start_byte - chunk["start"] : citation.end_byte - chunk["start"]
                ]
                assert stored.decode("utf-8") == citation.quote and chunk["doc"] == citation.document_id
                checked += 1
    return checked


async def test_extractive_reports_cite_stored_bytes_and_two_runs_agree(harbour: GraphRag) -> None:
    service = ReportService(harbour.store, FLEET, ReportOptions(max_findings=20))
    preview = await service.preview()
    assert preview.writer == EXTRACTIVE_WRITER and preview.calls == 0 and preview.max_output_tokens == 0
    written = await service.write()
    assert written.reports >= 3 and written.findings >= written.reports and written.calls == 0
    assert written.dropped == {code.value: 0 for code in ReportDrop} and written.limits_reached == ()
    listing = await service.list()
    assert len(listing.reports) == written.reports
    assert await assert_every_citation_is_the_stored_bytes(harbour, listing) == written.findings
    # Every fact of the sample is among its community's findings, worded from the fact.
    texts = {finding.text for report in listing.reports for finding in report.findings}
    assert {"Gannet owned by House Orrin.", "Selkie carries tar.", "Velde & Daughters based in Saltmere."} <= texts
    # Same graph, same reports: a second run, and a rebuild of the communities then a run.
    again = await service.write()
    assert again.removed == written.reports and again.run_id != written.run_id
    assert (await service.list()) == listing
    rebuilt = await CommunityService(harbour.store, FLEET).build()
    assert rebuilt.communities > 0 and (await service.list()).reports == (), "a build replaces the reports"
    await service.write()
    assert (await service.list()) == listing


class _Careless:
    """A writer that cites badly on purpose: the extractive findings, then three that cannot verify."""

    label = "careless"

    def request_bytes(self, source: ReportInput) -> int:
        return 0

    async def write(self, source: ReportInput) -> ReportDraft:
        good = await ExtractiveReportWriter().write(source)
        shown = source.passages[0].chunk_id if source.passages else "none"
        bad = (
            DraftFinding("Invented.", ((shown, "words no page of the harbour holds"),)),
            DraftFinding("Not shown.", (("chunk-never-shown", "The Gannet"),)),
            DraftFinding("Uncited.", ()),
        )
        # The eastern fleet's community gets only the bad ones; the others two good ones first.
        kept = () if "Ashgrove Company" in source.members else good.findings[:2]
        return ReportDraft(title=good.title, findings=kept + bad)


async def test_unsupported_findings_are_dropped_and_counted_and_a_report_without_one_is_not_stored(
    harbour: GraphRag,
) -> None:
    communities = (await CommunityService(harbour.store, FLEET).list()).communities
    written = await ReportService(harbour.store, FLEET, writer=_Careless()).write()
    with_facts = len(communities) - written.without_facts
    assert written.dropped[ReportDrop.UNSUPPORTED_FINDING] == 3 * with_facts
    assert written.reports == with_facts - 1 and written.findings == 2 * written.reports
    assert written.dropped[ReportDrop.NO_VERIFIED_FINDING] == 1
    listing = await ReportService(harbour.store, FLEET).list()
    assert all(report.unsupported == 3 and report.writer == "careless" for report in listing.reports)
    assert await assert_every_citation_is_the_stored_bytes(harbour, listing) == written.findings
    stored = list(await harbour.store.read("MATCH (f:ReportFinding) RETURN f.text AS text"))
    assert stored and not {"Invented.", "Not shown.", "Uncited."} & {row["text"] for row in stored}


async def test_the_bounds_are_reported(harbour: GraphRag) -> None:
    service = ReportService(harbour.store, FLEET)
    one = await service.write(ReportOptions(max_reports=1, max_findings=1))
    assert one.reports == 1 and one.findings == 1
    assert {limit.name for limit in one.limits_reached} == {LimitName.REPORT_COMMUNITIES, LimitName.REPORT_FINDINGS}
    tight = await service.write(ReportOptions(max_facts_per_report=1, max_chunks_per_report=1))
    assert LimitName.REPORT_FACTS in {limit.name for limit in tight.limits_reached}
    assert all(len(report.findings) == 1 for report in (await service.list()).reports)
    listed = await service.list(limit=1)
    assert len(listed.reports) == 1 and listed.limits_reached[0].name == LimitName.MAX_LISTED


async def test_a_reset_of_everything_removes_the_reports(harbour: GraphRag) -> None:
    written = await ReportService(harbour.store, FLEET).write()
    report = await harbour.maintenance.reset()
    assert report.reports == written.reports and report.communities > 0
    assert list(await harbour.store.read("MATCH (n) WHERE n:CommunityReport OR n:ReportFinding RETURN n")) == []


def _model_reply(body: dict[str, Any]) -> str:
    """A model over HTTP: cites the first sentence of the first passage, invents one quote; one reply is not JSON."""
    prompt = body["messages"][-1]["content"]
    items = parse_evidence(prompt)
    if '"Tarn Quay"' in prompt.split("<evidence>", 1)[0]:
        return "I cannot write JSON today."
    chunk_id, text = items[0]
    sentence = text.split("\n\n", 1)[-1].split(". ", 1)[0]
    findings = [
        {"text": "A ship of this fleet calls here.", "citations": [{"chunkId": chunk_id, "quote": sentence}]},
        {"text": "The fleet was founded in 1802.", "citations": [{"chunkId": chunk_id, "quote": "founded in 1802"}]},
    ]
    return json.dumps({"title": "A fleet and its ports", "findings": findings})


async def test_the_model_writer_over_http_is_previewed_bounded_and_verified(
    harbour: GraphRag, openai_server: OpenAIServer
) -> None:
    openai_server.chat_responder = _model_reply
    options = ReportOptions(max_output_tokens=500)
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        service = ReportService(harbour.store, FLEET, options, writer=ChatReportWriter(chat, options))
        preview = await service.preview()
        assert openai_server.requests_to("/v1/chat/completions") == [], "a preview sends nothing"
        assert preview.writer == "test-model" and preview.calls > 0 and preview.input_tokens > 0
        assert preview.max_output_tokens == preview.calls * 500
        written = await service.write()
    sent = openai_server.requests_to("/v1/chat/completions")
    assert written.calls == preview.calls == len(sent)
    body = sent[0].body
    assert body["max_completion_tokens"] == 500 and body["response_format"]["json_schema"]["strict"] is True
    unreadable = written.dropped[ReportDrop.UNREADABLE_REPORT]
    assert unreadable >= 1 and written.reports == written.calls - unreadable
    assert written.dropped[ReportDrop.UNSUPPORTED_FINDING] == written.reports
    listing = await service.list()
    assert all(r.title == "A fleet and its ports" and r.writer == "test-model" for r in listing.reports)
    assert all(len(r.findings) == 1 and r.unsupported == 1 for r in listing.reports)
    assert await assert_every_citation_is_the_stored_bytes(harbour, listing) == written.reports


async def test_a_global_question_is_answered_from_the_reports_with_citations_verified_now(harbour: GraphRag) -> None:
    await ReportService(harbour.store, FLEET, ReportOptions(max_findings=20)).write()
    answers = GlobalAnswers(harbour.store, FLEET)
    answered = await answers.answer("Which ships are owned by House Orrin?")
    assert answered.refused is None and answered.answer is not None and answered.answer.endswith(GLOBAL_NOTE)
    for ship in ("Gannet", "Skua", "Petrel"):
        assert f"{ship} owned by House Orrin." in answered.answer
    assert answered.citations and answered.reports
    for citation in answered.citations:
        (chunk,) = list(
            await harbour.store.read(
                "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start", {"id": citation.chunk_id}
            )
        )
        span = chunk["text"].encode()[citation.start_byte - chunk["start"] : citation.end_byte - chunk["start"]]
        assert span.decode() == citation.quote
    unanswerable = await answers.answer("What did saffron cost at the spring fair?")
    assert unanswerable.refused == GlobalRefusal.NO_RELEVANT_FINDING and unanswerable.answer is None
    bounded = await answers.answer("Which ships are owned by House Orrin?", GlobalOptions(max_findings=1))
    assert [limit.name for limit in bounded.limits_reached] == [LimitName.GLOBAL_FINDINGS]
    # The Skua's log removed: no answer cites its chunk, though the stored report still names it.
    skua = [c for c in answered.citations if "Skua is owned" in c.quote]
    assert skua
    removed = await harbour.maintenance.remove_source(skua[0].document_id)
    assert removed.documents == 1 and removed.findings_retracted >= 1
    after = await answers.answer("Which ships are owned by House Orrin?")
    # The removal retracted the findings the log alone supported: none is left to drop.
    assert after.refused is None and after.findings_dropped == 0
    assert skua[0].document_id not in {c.document_id for c in after.citations}
    assert "Gannet owned by House Orrin." in (after.answer or "")
    assert "Skua owned by House Orrin." not in (after.answer or "")


async def test_a_global_question_without_reports_is_refused(harbour: GraphRag) -> None:
    refused = await GlobalAnswers(harbour.store, FLEET).answer("Which ships are owned by House Orrin?")
    assert refused.refused == GlobalRefusal.NO_REPORTS and refused.citations == ()


async def test_a_failed_model_call_writes_nothing_and_the_stored_reports_stay(
    harbour: GraphRag, openai_server: OpenAIServer
) -> None:
    before = await ReportService(harbour.store, FLEET).write()
    listing = await ReportService(harbour.store, FLEET).list()
    openai_server.chat_responder = _model_reply
    openai_server.fail(400)
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        with pytest.raises(ModelCallFailed) as failed:
            await ReportService(harbour.store, FLEET, writer=ChatReportWriter(chat)).write()
    assert failed.value.code == ErrorCode.MODEL_REQUEST_REJECTED
    assert len(openai_server.requests_to("/v1/chat/completions")) == 1, "the run stops at the failed call"
    assert before.reports > 0 and (await ReportService(harbour.store, FLEET).list()) == listing


async def _stored_findings(rag: GraphRag) -> list[dict[str, Any]]:
    """Every stored finding's report and parallel citation lists, read raw."""
    return list(
        await rag.store.read(
            "MATCH (r:CommunityReport)-[:HAS_FINDING]->(f:ReportFinding) RETURN r.id AS report, f.text AS text, "
            "f.chunkIds AS chunkIds, f.documentIds AS documentIds, f.startBytes AS startBytes, "
            "f.endBytes AS endBytes, f.quotes AS quotes ORDER BY report, f.position"
        )
    )


def _expected_retraction(findings: list[dict[str, Any]], document_id: str) -> tuple[int, int, int]:
    """What removing ``document_id`` must retract, trim and drop, from the findings as stored before."""
    retracted = trimmed = 0
    kept: dict[str, int] = {}
    for finding in findings:
        cited = set(finding["documentIds"])
        kept.setdefault(finding["report"], 0)
        if cited == {document_id}:
            retracted += 1
            continue
        trimmed += document_id in cited
        kept[finding["report"]] += 1
    return retracted, trimmed, sum(1 for count in kept.values() if count == 0)


async def test_a_removal_retracts_at_once_every_finding_its_document_alone_supported(harbour: GraphRag) -> None:
    # One finding per report: a report whose finding cites the removed log goes with it.
    service = ReportService(harbour.store, FLEET, ReportOptions(max_findings=1))
    written = await service.write()
    before = await _stored_findings(harbour)
    assert len(before) == written.findings == written.reports
    # A question the first finding answers, from its own words.
    question = f"What about {before[0]['text'].rstrip('.')}?"
    answers = GlobalAnswers(harbour.store, FLEET)
    asked = await answers.answer(question)
    assert asked.refused is None and asked.citations
    document_id = before[0]["documentIds"][0]
    assert document_id in {citation.document_id for citation in asked.citations}
    retracted, trimmed, dropped = _expected_retraction(before, document_id)
    assert retracted >= 1 and dropped == retracted and trimmed == 0
    planned = await harbour.maintenance.preview(ResetScope(document_ids=(document_id,)))
    assert (planned.findings_retracted, planned.findings_trimmed, planned.reports) == (retracted, 0, dropped)
    assert len(await _stored_findings(harbour)) == len(before), "a preview writes nothing"
    removed = await harbour.maintenance.remove_source(document_id)
    assert removed.documents == 1
    assert (removed.findings_retracted, removed.findings_trimmed, removed.reports) == (retracted, 0, dropped)
    after = await _stored_findings(harbour)
    assert len(after) == len(before) - retracted
    assert all(document_id not in finding["documentIds"] for finding in after)
    listing = await service.list()
    assert len(listing.reports) == written.reports - dropped
    assert await assert_every_citation_is_the_stored_bytes(harbour, listing) == len(after)
    again = await answers.answer(question)
    assert again.findings_dropped == 0, "nothing stored cites the removed chunks any more"
    assert document_id not in {citation.document_id for citation in again.citations}


class _Joining:
    """The extractive findings, then one more citing the first passage of each of two documents."""

    label = "joining"

    def request_bytes(self, source: ReportInput) -> int:
        return 0

    async def write(self, source: ReportInput) -> ReportDraft:
        draft = await ExtractiveReportWriter().write(source)
        first: dict[str, tuple[str, str]] = {}
        documents = {item.chunk_id: item.document_id for item in source.passages}
        for finding in draft.findings:
            chunk_id, quote = finding.citations[0]
            first.setdefault(documents[chunk_id], (chunk_id, quote))
        findings = draft.findings
        if len(first) >= 2:
            findings += (DraftFinding("Joined.", tuple(list(first.values())[:2])),)
        return ReportDraft(title=draft.title, findings=findings)


async def test_a_finding_citing_other_documents_too_keeps_only_their_citations(harbour: GraphRag) -> None:
    service = ReportService(harbour.store, FLEET, ReportOptions(max_findings=50), writer=_Joining())
    await service.write()
    before = await _stored_findings(harbour)
    joined = next(f for f in before if f["text"] == "Joined.")
    document_id, kept_document = joined["documentIds"]
    retracted, trimmed, dropped = _expected_retraction(before, document_id)
    assert trimmed >= 1 and retracted >= 1
    planned = await harbour.maintenance.preview(ResetScope(document_ids=(document_id,)))
    assert (planned.findings_retracted, planned.findings_trimmed, planned.reports) == (retracted, trimmed, dropped)
    removed = await harbour.maintenance.reset(ResetScope(document_ids=(document_id,)))
    assert (removed.findings_retracted, removed.findings_trimmed, removed.reports) == (retracted, trimmed, dropped)
    after = await _stored_findings(harbour)
    assert all(document_id not in finding["documentIds"] for finding in after)
    (still,) = [f for f in after if f["report"] == joined["report"] and f["text"] == "Joined."]
    assert still["documentIds"] == [kept_document] and still["chunkIds"] == joined["chunkIds"][1:]
    assert still["quotes"] == joined["quotes"][1:] and still["startBytes"] == joined["startBytes"][1:]
    listing = await service.list()
    assert await assert_every_citation_is_the_stored_bytes(harbour, listing) == sum(len(f["chunkIds"]) for f in after)
    report = next(r for r in listing.reports if r.id == joined["report"])
    assert report.trimmed >= 1 and report.retracted == sum(
        1 for f in before if f["report"] == report.id and set(f["documentIds"]) == {document_id}
    )


async def _communities_of(rag: GraphRag, *names: str) -> set[str]:
    """The ids of the communities holding any of the things named."""
    found = await rag.store.read(
        "MATCH (t)-[:IN_COMMUNITY]->(c:Community) WHERE t.name IN $names RETURN DISTINCT c.id AS id", {"names": names}
    )
    return set(found.column("id"))


async def _communities_citing(rag: GraphRag, document_id: str) -> set[str]:
    """The ids of the communities with a fact among their members that lists ``document_id``."""
    found = await rag.store.read(
        "MATCH (a)-[:IN_COMMUNITY]->(c:Community)<-[:IN_COMMUNITY]-(b) MATCH (a)-[f]->(b) "
        "WHERE $document IN coalesce(f.documentIds, []) RETURN DISTINCT c.id AS id",
        {"document": document_id},
    )
    return set(found.column("id"))


async def test_the_communities_a_change_touches_and_only_they_are_stale(
    harbour: GraphRag, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = CommunityService(harbour.store, FLEET)
    fresh = await service.stale()
    assert fresh.stale == 0 and fresh.checked == len((await service.list()).communities) > 0
    assert HealthFinding.STALE_COMMUNITIES not in (await harbour.maintenance.check()).codes
    # An ingest: a new ship calling at Saltmere, a thing no community holds yet.
    monkeypatch.setitem(FACTS, "# Log of the Tern", (("Tern", "CALLS_AT", "Saltmere"),))
    tern = Sources.text("tern", "# Log of the Tern\n\nThe Tern called at Saltmere in May.\n", "text/markdown")
    assert (await harbour.ingestion.ingest([tern])).failed == 0
    saltmere = await _communities_of(harbour, "Saltmere")
    ingested = await service.stale()
    assert {c.id for c in ingested.communities} == saltmere and ingested.stale == len(saltmere) >= 1
    assert all(c.unplaced == 1 and not c.fingerprint_changed for c in ingested.communities)
    # A removal: the communities with a fact the Skua's log states, and no other.
    (skua,) = (
        await harbour.store.read("MATCH (d:Document) WHERE d.sourceUri ENDS WITH '/skua-log' RETURN d.id AS id")
    ).column("id")
    citing = await _communities_citing(harbour, skua)
    assert citing and citing - saltmere
    await harbour.maintenance.remove_source(skua)
    removed = await service.stale()
    assert {c.id for c in removed.communities} == saltmere | citing
    assert all(c.fingerprint_changed for c in removed.communities if c.id in citing)
    health = await harbour.maintenance.check()
    assert health.count(HealthFinding.STALE_COMMUNITIES) == len(saltmere | citing)
    listed = await service.stale(limit=1)
    assert len(listed.communities) == 1 and listed.limits_reached[0].name == LimitName.MAX_LISTED


async def test_a_merge_and_its_undo_leave_stale_the_communities_of_the_merged_thing(harbour: GraphRag) -> None:
    service = CommunityService(harbour.store, FLEET)
    ships = await harbour.store.read(
        "MATCH (s:Ship) WHERE s.name IN ['Gannet', 'Skua'] RETURN s.name AS name, s.id AS id ORDER BY name"
    )
    gannet, skua = ({"id": row["id"], "name": row["name"], "aliases": [], "mentions": 1} for row in ships)
    merged_into = await _communities_of(harbour, "Skua")
    # Far from both: the Ashgrove fleet's communities hold neither ship nor any of their neighbours.
    far = await _communities_of(harbour, "Corran", "Merrow", "Selkie") - await _communities_of(
        harbour, "Gannet", "Skua", "Port Vell", "House Orrin", "salt cod", "whale oil", "Saltmere"
    )
    assert far and merged_into
    suggestion = Suggestion.model_validate({"kind": "Ship", "rule": "alias", "kept": gannet, "merged": skua})
    resolution = Resolution(harbour)
    (run,) = await resolution.plan([suggestion]).apply()
    after_merge = {c.id for c in (await service.stale()).communities}
    assert merged_into <= after_merge and not after_merge & far
    await resolution.undo(run)
    after_undo = await service.stale()
    assert merged_into <= {c.id for c in after_undo.communities} and not {c.id for c in after_undo.communities} & far
    assert any(c.unplaced for c in after_undo.communities), "the Skua is back, in no community"
    assert (await harbour.maintenance.check()).count(HealthFinding.STALE_COMMUNITIES) == after_undo.stale


async def test_health_reports_the_reports_a_removal_took_findings_from(harbour: GraphRag) -> None:
    await ReportService(harbour.store, FLEET, ReportOptions(max_findings=50), writer=_Joining()).write()
    assert HealthFinding.RETRACTED_FINDINGS not in (await harbour.maintenance.check()).codes
    joined = next(f for f in await _stored_findings(harbour) if f["text"] == "Joined.")
    removed = await harbour.maintenance.remove_source(joined["documentIds"][0])
    assert removed.findings_trimmed >= 1
    listing = await ReportService(harbour.store, FLEET).list()
    touched = [r for r in listing.reports if r.retracted or r.trimmed]
    health = await harbour.maintenance.check()
    assert health.count(HealthFinding.RETRACTED_FINDINGS) == len(touched) >= 1


class _Counting:
    """The extractive stand-in, recording the community of every call."""

    label = EXTRACTIVE_WRITER

    def __init__(self) -> None:
        self.called: list[str] = []

    def request_bytes(self, source: ReportInput) -> int:
        return 0

    async def write(self, source: ReportInput) -> ReportDraft:
        self.called.append(source.community_id)
        return await ExtractiveReportWriter().write(source)


async def test_a_refresh_writes_again_only_the_reports_whose_inputs_changed(
    harbour: GraphRag, monkeypatch: pytest.MonkeyPatch
) -> None:
    communities = CommunityService(harbour.store, FLEET)
    writer = _Counting()
    reports = ReportService(harbour.store, FLEET, ReportOptions(max_findings=20), writer=writer)
    written = await reports.write()
    assert written.reports == len(writer.called) > 2
    before = {c.id: c.fingerprint for c in (await communities.list()).communities}
    # Nothing changed: the same communities, every report kept, no writer call.
    writer.called.clear()
    same = await communities.refresh()
    assert (same.reports_kept, same.reports_removed) == (written.reports, 0)
    assert {c.id: c.fingerprint for c in (await communities.list()).communities} == before
    assert (await reports.write(only_missing=True)).reports == 0 and writer.called == []
    # An ingest restating a fact (one more document for it): its communities, same ids, new fingerprints.
    monkeypatch.setitem(FACTS, "# Second log of the Heron", (("Heron", "CALLS_AT", "Saltmere"),))
    heron = Sources.text("heron-2", "# Second log of the Heron\n\nThe Heron called at Saltmere.\n", "text/markdown")
    assert (await harbour.ingestion.ingest([heron])).failed == 0
    restated = await communities.refresh()
    found = (await communities.list()).communities
    assert {c.id for c in found} == set(before)
    changed = {c.id for c in found if c.fingerprint != before[c.id]}
    assert (
        changed and restated.reports_removed == len(changed) and restated.reports_kept == written.reports - len(changed)
    )
    writer.called.clear()
    await reports.write(only_missing=True)
    assert set(writer.called) == changed and len(writer.called) == len(changed)
    before = {c.id: c.fingerprint for c in found}
    writer.called.clear()
    listing = await reports.list()
    # A removal touching the Skua's communities: only those are written again.
    (skua,) = (
        await harbour.store.read("MATCH (d:Document) WHERE d.sourceUri ENDS WITH '/skua-log' RETURN d.id AS id")
    ).column("id")
    await harbour.maintenance.remove_source(skua)
    stale = {c.id for c in (await communities.stale()).communities}
    assert stale
    refreshed = await communities.refresh()
    assert refreshed.reports_removed >= 1
    found = (await communities.list()).communities
    after = {c.id: c.fingerprint for c in found}
    changed_with_facts = {c.id for c in found if c.facts and before.get(c.id) != c.fingerprint}
    with_report = {r.community_id for r in (await reports.list()).reports}
    assert with_report.isdisjoint(stale), "no stale community keeps its report"
    assert len(with_report) == refreshed.reports_kept
    again = await reports.write(only_missing=True)
    # The writer is called for every community whose inputs changed, and for no other.
    assert set(writer.called) == changed_with_facts and len(writer.called) == len(changed_with_facts)
    assert 0 < len(writer.called) < written.reports, "only the touched communities are written again"
    assert refreshed.reports_kept + again.reports == len((await reports.list()).reports)
    untouched = [
        r for r in listing.reports if r.community_id in after and after[r.community_id] == before[r.community_id]
    ]
    kept = {r.id: r for r in (await reports.list()).reports}
    assert untouched and all(kept[r.id] == r for r in untouched), "a kept report is the one stored before"
    # The same graph, the same result as a build and a full run from scratch.
    refreshed_listing = await reports.list()
    assert (await communities.stale()).stale == 0
    await communities.build()
    await ReportService(harbour.store, FLEET, ReportOptions(max_findings=20)).write()
    assert {c.id: c.fingerprint for c in (await communities.list()).communities} == after
    assert await reports.list() == refreshed_listing
