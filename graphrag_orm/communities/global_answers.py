"""Questions about the whole corpus, answered offline from the community reports, every citation verified now.

Map, then reduce, with no model (the offline path; a model's map and reduce are not built):

- **map**: read the stored reports (at most ``max_reports``, coarsest level first) and score
  each finding by the content words it shares with the question (the words of its text and
  of its cited quotes, under the extractive stand-in's rules,
  :func:`graphrag_orm.chat.extractive.content_words`). A finding is relevant when it shares
  at least two of them (one when the question has only one).
- **reduce**: keep the most relevant findings (at most ``max_findings``; ties by report
  level, report and position), read their cited chunks as stored *now*, and locate every
  citation's quote in its chunk with :func:`graphrag_orm.citations.locate`, like every
  answer. A finding with a citation that no longer locates (its chunk was removed or
  changed) is left out, so no answer cites a chunk that is gone.

The answer is the kept findings' sentences, marked as written by no model; its citations are
the located chunk spans. Refused with a :class:`~graphrag_orm.codes.GlobalRefusal` code
when nothing is stored, nothing is relevant, or nothing relevant still verifies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import Field

from graphrag_orm.chat.extractive import content_words
from graphrag_orm.citations import Citation, locate
from graphrag_orm.codes import GlobalRefusal, LimitName
from graphrag_orm.communities.report_statements import ReportStatements
from graphrag_orm.communities.reports import evidence_item
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.layout import Layout
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import Store
from graphrag_orm.values import Limit, Options, Value

__all__ = ["GLOBAL_NOTE", "GlobalAnswer", "GlobalAnswers", "GlobalOptions"]

#: Said after every offline global answer: no model wrote it.
GLOBAL_NOTE: Final = " (From the community reports; no model wrote this answer.)"


class GlobalOptions(Options):
    """Bounds of one global answer; outside them, ``invalid-option``."""

    max_reports: int = Field(200, ge=1, le=1_000, description="reports read: GlobalReports")
    max_findings: int = Field(8, ge=1, le=100, description="findings in the answer: GlobalFindings")


class GlobalAnswer(Value):
    """An answer from the reports: its text and verified chunk citations, or a refusal with its code.

    ``findings_dropped`` counts relevant findings left out because a citation no longer
    locates in the stored bytes.
    """

    question: str
    answer: str | None = None
    citations: tuple[Citation, ...] = ()
    reports: tuple[str, ...] = ()
    refused: GlobalRefusal | None = None
    findings_dropped: int = 0
    limits_reached: tuple[Limit, ...] = ()


class GlobalAnswers:
    """Answers questions about the whole corpus from one ontology's stored reports, through ``store``."""

    def __init__(
        self,
        store: Store,
        ontology: Ontology,
        options: GlobalOptions | None = None,
        *,
        model: LexicalModel | None = None,
    ) -> None:
        self.store = store
        self.options = options or GlobalOptions()
        self.statements = ReportStatements.of(ontology, model or for_layout(Layout.DEFAULT))

    async def answer(self, question: str, options: GlobalOptions | None = None) -> GlobalAnswer:
        """Map over the reports, reduce to the relevant findings whose citations verify now; or refuse."""
        options = options or self.options
        st = self.statements
        limits: list[Limit] = []
        rows = list(await self.store.read(st.listing, {"limit": options.max_reports + 1}, name="global.reports"))
        if len(rows) > options.max_reports:
            rows = rows[: options.max_reports]
            limits.append(Limit(name=LimitName.GLOBAL_REPORTS, value=options.max_reports))
        if not rows:
            return GlobalAnswer(question=question, refused=GlobalRefusal.NO_REPORTS, limits_reached=tuple(limits))
        order = {row["id"]: index for index, row in enumerate(rows)}
        wanted = content_words(question)
        need = 1 if len(wanted) == 1 else 2
        scored: list[tuple[int, int, int, dict[str, Any]]] = []
        findings = await self.store.read(st.findings_of, {"ids": list(order)}, name="global.findings")
        for position, row in enumerate(findings):
            words = content_words(" ".join([row["text"], *row["quotes"]]))
            shared = len(wanted & words)
            if wanted and shared >= need:
                scored.append((-shared, order[row["report"]], position, dict(row)))
        if not scored:
            return GlobalAnswer(
                question=question, refused=GlobalRefusal.NO_RELEVANT_FINDING, limits_reached=tuple(limits)
            )
        scored.sort(key=lambda entry: entry[:3])
        if len(scored) > options.max_findings:
            scored = scored[: options.max_findings]
            limits.append(Limit(name=LimitName.GLOBAL_FINDINGS, value=options.max_findings))
        chunk_ids = sorted({chunk for *_, row in scored for chunk in row["chunkIds"]})
        items: dict[str, EvidenceItem] = {}
        for found in await self.store.read(st.chunks, {"ids": chunk_ids}, name="global.chunks"):
            items[found["chunk"]["id"]] = evidence_item(found["chunk"], found["document"])
        texts: list[str] = []
        citations: list[Citation] = []
        reports: list[str] = []
        dropped = 0
        for *_, row in scored:
            located = _located(row, items)
            if located is None:
                dropped += 1
                continue
            texts.append(row["text"])
            citations.extend(c for c in located if c not in citations)
            if row["report"] not in reports:
                reports.append(row["report"])
        if not texts:
            return GlobalAnswer(
                question=question,
                refused=GlobalRefusal.CITATION_NOT_FOUND,
                findings_dropped=dropped,
                limits_reached=tuple(limits),
            )
        return GlobalAnswer(
            question=question,
            answer=" ".join(texts) + GLOBAL_NOTE,
            citations=tuple(citations),
            reports=tuple(reports),
            findings_dropped=dropped,
            limits_reached=tuple(limits),
        )


def _located(row: Mapping[str, Any], items: Mapping[str, EvidenceItem]) -> tuple[Citation, ...] | None:
    """Each of a finding's quotes located in its chunk as stored now, or None when one is not."""
    located: list[Citation] = []
    for chunk_id, quote in zip(row["chunkIds"], row["quotes"], strict=True):
        item = items.get(chunk_id)
        citation = locate(item, quote) if item is not None else None
        if citation is None:
            return None
        located.append(citation)
    return tuple(located)
