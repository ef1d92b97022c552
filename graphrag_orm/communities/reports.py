"""Community reports whose every finding is cited, verified byte-exact before anything is stored.

A run reads the stored communities (coarsest level first, at most ``max_reports``), shows
each writer one community (its members, its facts and the passages where extraction
grounded them: chunks of the fact's documents mentioning both ends), and checks each
draft: every citation must name a passage the writer was shown and quote words that
:func:`graphrag_orm.citations.locate` finds in it, byte-exact under the answers' rules.
A finding with a citation that does not verify, or none, is dropped and counted
``unsupported-finding``; a report left with no finding is not stored
(``no-verified-finding``). What is stored is the located bytes (chunk, document, byte
span, the stored text there), never the writer's copy of the quote.

The run replaces every stored report in one write transaction of a few batched
``UNWIND`` statements, after every writer call: a failed call writes nothing, and a
reader sees the old reports or the new ones. With ``only_missing`` (after
``CommunityService.refresh``) it reports only on the communities with no report and
touches no other report.

In a tenanted graph (docs/tenancy.md) a run is the bound tenant's: it reads the tenant's
communities, facts and chunks, verifies every citation against the tenant's stored text, and
replaces the tenant's reports only, each written with the tenant.
"""

from __future__ import annotations

import bisect
import hashlib
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from graphrag_orm.citations import Citation, locate
from graphrag_orm.codes import LimitName, ReportDrop
from graphrag_orm.communities.options import ReportOptions
from graphrag_orm.communities.report_statements import ReportStatements
from graphrag_orm.communities.values import (
    FindingFound,
    ReportCitation,
    ReportFound,
    ReportListing,
    ReportPreview,
    ReportsWritten,
)
from graphrag_orm.communities.writers import (
    DraftFinding,
    ExtractiveReportWriter,
    FactPassage,
    ReportFact,
    ReportInput,
    ReportWriter,
)
from graphrag_orm.evidence import EvidenceItem, Grounding, PageStart
from graphrag_orm.layout import Layout
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.tenancy import check_fenced
from graphrag_orm.values import Limit

__all__ = [
    "DEFAULT_LISTED_REPORTS",
    "MAX_LISTED_REPORTS",
    "MAX_REPORT_WRITE_ROWS",
    "PASSAGES_PER_FACT",
    "ReportService",
    "evidence_item",
]

DEFAULT_LISTED_REPORTS: Final = 100
MAX_LISTED_REPORTS: Final = 1_000
#: Rows per UNWIND statement of a report run's writes.
MAX_REPORT_WRITE_ROWS: Final = 5_000
#: Passages read per fact (chunks of its documents that mention both ends), in chunk id order.
PASSAGES_PER_FACT: Final = 2
#: Estimated UTF-8 bytes per token for the cost preview (as the ingestion preview estimates).
_BYTES_PER_TOKEN: Final = 4


def _batches(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [rows[i : i + MAX_REPORT_WRITE_ROWS] for i in range(0, len(rows), MAX_REPORT_WRITE_ROWS)]


def _hash(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:24]


def _pages(page_starts: Sequence[int] | None, start: int, end: int) -> tuple[PageStart, ...] | None:
    if not page_starts:
        return None
    first = max(bisect.bisect_right(page_starts, start), 1)
    last = max(bisect.bisect_right(page_starts, max(end - 1, start)), first)
    return tuple(PageStart(page=p, start_byte=int(page_starts[p - 1])) for p in range(first, last + 1))


def evidence_item(chunk: Mapping[str, Any], document: Mapping[str, Any] | None) -> EvidenceItem:
    """A chunk as the report statements project it (with its document) as a citable passage."""
    document = document or {}
    start, end = int(chunk["startByte"]), int(chunk["endByte"])
    return EvidenceItem(
        chunk_id=chunk["id"],
        document_id=chunk["documentId"],
        source_uri=document.get("sourceUri") or "",
        title=document.get("title"),
        text=chunk["text"],
        start_byte=start,
        end_byte=end,
        score=0.0,
        pages=_pages(document.get("pageStarts"), start, end),
        grounding=Grounding.stored(chunk.get("grounding")),
        text_origin=document.get("textOrigin"),
    )


class _Community:
    """One community as read: id, level, fingerprint, and what its writer is shown."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.id: str = row["id"]
        self.level: int = int(row["level"])
        self.fingerprint: str = row["fingerprint"]
        self.facts: list[dict[str, Any]] = []


def _verify(finding: DraftFinding, items: Mapping[str, EvidenceItem]) -> tuple[Citation, ...] | None:
    """Every citation located in the passage it names, or None when one is not (or there is none)."""
    if not finding.citations:
        return None
    located: list[Citation] = []
    for chunk_id, quote in finding.citations:
        item = items.get(chunk_id)
        citation = locate(item, quote) if item is not None else None
        if citation is None:
            return None
        located.append(citation)
    return tuple(located)


class ReportService:
    """Writes, previews and lists the reports of one ontology's communities, through ``store``.

    ``writer`` is the extractive stand-in unless given (a :class:`ChatReportWriter` for a
    model); ``model`` is the layout's lexical model, the default layout's when not given.
    """

    def __init__(
        self,
        store: Store,
        ontology: Ontology,
        options: ReportOptions | None = None,
        *,
        writer: ReportWriter | None = None,
        model: LexicalModel | None = None,
    ) -> None:
        model = model or for_layout(Layout.DEFAULT)
        # A tenanted graph's reports are the tenant's, filtered in each statement (docs/tenancy.md).
        check_fenced(model.layout.tenanted, store.tenanted, "community reports")
        self.store = store
        self.ontology = ontology
        self.options = options or ReportOptions()
        self.writer: ReportWriter = writer or ExtractiveReportWriter()
        self.statements = ReportStatements.of(ontology, model)

    async def preview(self, options: ReportOptions | None = None, *, only_missing: bool = False) -> ReportPreview:
        """What :meth:`write` would cost: calls and estimated input tokens, before any call; writes nothing."""
        options = options or self.options
        inputs, _, limits = await self._inputs(options, only_missing=only_missing)
        calls = [source for source in inputs if source.facts]
        request_bytes = sum(self.writer.request_bytes(source) for source in calls)
        sends = request_bytes > 0
        return ReportPreview(
            writer=self.writer.label,
            communities=len(inputs),
            calls=len(calls) if sends else 0,
            input_tokens=-(-request_bytes // _BYTES_PER_TOKEN),
            max_output_tokens=len(calls) * options.max_output_tokens if sends else 0,
            limits_reached=tuple(limits),
        )

    async def write(self, options: ReportOptions | None = None, *, only_missing: bool = False) -> ReportsWritten:
        """Write a report for each community (at most ``max_reports``) and replace the stored reports with them.

        ``only_missing``: report only on the communities with no report (after
        ``CommunityService.refresh``, those whose inputs changed), and leave the other reports
        as they are.
        """
        options = options or self.options
        began = time.perf_counter()
        run_id = f"reports-{uuid.uuid4().hex[:16]}"
        inputs, fingerprints, limits = await self._inputs(options, only_missing=only_missing)
        dropped: Counter[str] = Counter({code.value: 0 for code in ReportDrop})
        reports: list[dict[str, Any]] = []
        findings: list[dict[str, Any]] = []
        without_facts = calls = input_tokens = output_tokens = 0
        findings_cut = False
        for source in inputs:
            if not source.facts:
                without_facts += 1
                continue
            draft = await self.writer.write(source)
            calls += draft.calls
            input_tokens += draft.input_tokens
            output_tokens += draft.output_tokens
            if draft.problem is not None:
                dropped[ReportDrop.UNREADABLE_REPORT.value] += 1
                continue
            if draft.cut:
                dropped[ReportDrop.CUT_FINDING.value] += draft.cut
            drafts = draft.findings
            if len(drafts) > options.max_findings:
                drafts, findings_cut = drafts[: options.max_findings], True
            items = {item.chunk_id: item for item in source.passages}
            report_id = f"report-{_hash(source.community_id)}"
            kept: list[dict[str, Any]] = []
            for finding in drafts:
                located = _verify(finding, items)
                if located is None:
                    dropped[ReportDrop.UNSUPPORTED_FINDING.value] += 1
                    continue
                kept.append(
                    {
                        "report": report_id,
                        "props": {
                            "id": f"finding-{_hash(report_id, len(kept))}",
                            "reportId": report_id,
                            "position": len(kept),
                            "text": finding.text,
                            "chunkIds": [c.chunk_id for c in located],
                            "documentIds": [c.document_id for c in located],
                            "startBytes": [c.start_byte for c in located],
                            "endBytes": [c.end_byte for c in located],
                            "quotes": [c.quote for c in located],
                        },
                    }
                )
            if not kept:
                dropped[ReportDrop.NO_VERIFIED_FINDING.value] += 1
                continue
            reports.append(
                {
                    "community": source.community_id,
                    "props": {
                        "id": report_id,
                        "communityId": source.community_id,
                        "level": source.level,
                        "title": draft.title,
                        "findings": len(kept),
                        "unsupported": len(drafts) - len(kept),
                        "writer": self.writer.label,
                        "fingerprint": fingerprints[source.community_id],
                        "runId": run_id,
                    },
                }
            )
            findings.extend(kept)
        if findings_cut:
            limits.append(Limit(name=LimitName.REPORT_FINDINGS, value=options.max_findings))
        st = self.statements

        written_for = [source.community_id for source in inputs]

        async def work(tx: StoreTransaction) -> int:
            if only_missing:
                # A report written meanwhile for one of these communities is replaced; no other is touched.
                removed = 0
                for start in range(0, len(written_for), MAX_REPORT_WRITE_ROWS):
                    ids = {"ids": written_for[start : start + MAX_REPORT_WRITE_ROWS]}
                    await tx.run(st.clear_findings_of, ids, name="reports.clear")
                    removed += int((await tx.run(st.clear_reports_of, ids, name="reports.clear")).value("removed", 0))
            else:
                await tx.run(st.clear_findings, name="reports.clear")
                removed = int((await tx.run(st.clear_reports, name="reports.clear")).value("removed", 0))
            for batch in _batches(reports):
                await tx.run(st.create_reports, {"rows": batch}, name="reports.create")
            for batch in _batches(findings):
                await tx.run(st.create_findings, {"rows": batch}, name="reports.findings")
            return removed

        removed = await self.store.write(work)
        return ReportsWritten(
            run_id=run_id,
            writer=self.writer.label,
            reports=len(reports),
            findings=len(findings),
            dropped=dict(sorted(dropped.items())),
            without_facts=without_facts,
            calls=calls,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            removed=removed,
            seconds=round(time.perf_counter() - began, 3),
            limits_reached=tuple(limits),
        )

    async def _inputs(
        self, options: ReportOptions, *, only_missing: bool = False
    ) -> tuple[list[ReportInput], dict[str, str], list[Limit]]:
        """Each community's writer input (facts, their passages, the passages' text), in level and id order."""
        st = self.statements
        limits: list[Limit] = []
        read = st.missing if only_missing else st.communities
        rows = list(await self.store.read(read, {"limit": options.max_reports + 1}, name="reports.read"))
        if len(rows) > options.max_reports:
            rows = rows[: options.max_reports]
            limits.append(Limit(name=LimitName.REPORT_COMMUNITIES, value=options.max_reports))
        communities = {row["id"]: _Community(row) for row in rows}
        if st.facts is not None and communities:
            fact_rows = await self.store.read(
                st.facts,
                {"ids": list(communities), "limit": options.max_facts_per_report + 1},
                name="reports.facts",
            )
            for row in fact_rows:
                communities[row["community"]].facts.append(dict(row))
        facts_cut = False
        pairs: dict[str, dict[str, Any]] = {}
        for community in communities.values():
            if len(community.facts) > options.max_facts_per_report:
                community.facts, facts_cut = community.facts[: options.max_facts_per_report], True
            for fact in community.facts:
                key = f"{fact['source']}|{fact['type']}|{fact['target']}"
                fact["key"] = key
                pairs[key] = {"key": key, "a": fact["a"], "b": fact["b"], "documents": list(fact["documentIds"])}
        if facts_cut:
            limits.append(Limit(name=LimitName.REPORT_FACTS, value=options.max_facts_per_report))
        passages: dict[str, list[FactPassage]] = defaultdict(list)
        if pairs:
            found = await self.store.read(
                st.evidence, {"pairs": list(pairs.values()), "perFact": PASSAGES_PER_FACT}, name="reports.evidence"
            )
            for row in found:
                passages[row["key"]].append(
                    FactPassage(
                        row["chunk"], tuple(sorted(row["sourceMentions"])), tuple(sorted(row["targetMentions"]))
                    )
                )
        chunk_ids = sorted({p.chunk_id for found in passages.values() for p in found})
        items: dict[str, EvidenceItem] = {}
        if chunk_ids:
            for row in await self.store.read(st.chunks, {"ids": chunk_ids}, name="reports.chunks"):
                items[row["chunk"]["id"]] = evidence_item(row["chunk"], row["document"])
        inputs: list[ReportInput] = []
        evidence_cut = False
        for community in communities.values():
            facts: list[ReportFact] = []
            shown: list[EvidenceItem] = []
            size = 0
            degree: Counter[str] = Counter()
            for fact in community.facts:
                kept: list[FactPassage] = []
                for passage in passages.get(fact["key"], ()):
                    item = items.get(passage.chunk_id)
                    if item is None:
                        continue
                    if passage.chunk_id not in {i.chunk_id for i in shown}:
                        bytes_ = len(item.text.encode("utf-8"))
                        if len(shown) >= options.max_chunks_per_report or size + bytes_ > options.max_evidence_bytes:
                            evidence_cut = True
                            continue
                        shown.append(item)
                        size += bytes_
                    kept.append(passage)
                degree[fact["sourceName"]] += 1
                degree[fact["targetName"]] += 1
                facts.append(
                    ReportFact(
                        fact["sourceName"], fact["type"], fact["targetName"], len(fact["documentIds"]), tuple(kept)
                    )
                )
            members = tuple(name for name, _ in sorted(degree.items(), key=lambda pair: (-pair[1], pair[0])))
            inputs.append(ReportInput(community.id, community.level, members, tuple(facts), tuple(shown)))
        if evidence_cut:
            limits.append(Limit(name=LimitName.REPORT_EVIDENCE, value=options.max_chunks_per_report))
        return inputs, {c.id: c.fingerprint for c in communities.values()}, limits

    async def list(self, *, limit: int = DEFAULT_LISTED_REPORTS) -> ReportListing:
        """The stored reports with their findings, coarsest level first, at most ``limit`` (``MaxListed``)."""
        limit = max(1, min(limit, MAX_LISTED_REPORTS))
        st = self.statements
        rows = list(await self.store.read(st.listing, {"limit": limit + 1}, name="reports.list"))
        limits: tuple[Limit, ...] = ()
        if len(rows) > limit:
            rows, limits = rows[:limit], (Limit(name=LimitName.MAX_LISTED, value=limit),)
        found: dict[str, list[FindingFound]] = defaultdict(list)
        if rows:
            for row in await self.store.read(st.findings_of, {"ids": [r["id"] for r in rows]}, name="reports.findings"):
                cited = zip(
                    row["chunkIds"], row["documentIds"], row["startBytes"], row["endBytes"], row["quotes"], strict=True
                )
                found[row["report"]].append(
                    FindingFound(
                        text=row["text"],
                        citations=tuple(
                            ReportCitation(chunk_id=c, document_id=d, start_byte=s, end_byte=e, quote=q)
                            for c, d, s, e, q in cited
                        ),
                    )
                )
        reports = tuple(
            ReportFound(
                id=row["id"],
                community_id=row["community"],
                level=row["level"],
                title=row["title"],
                writer=row["writer"],
                fingerprint=row["fingerprint"],
                unsupported=row["unsupported"],
                retracted=row["retracted"],
                trimmed=row["trimmed"],
                findings=tuple(found[row["id"]]),
            )
            for row in rows
        )
        return ReportListing(reports=reports, limits_reached=limits)
