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

**Inside a scope** (``answer(question, scope=...)``, the application's, as the agent tools and
MCP pass theirs): a finding is used only when every chunk it cites lies inside the scope
(:meth:`ResolvedScope.contains`), decided before the findings are cut to ``max_findings``;
a finding citing anything outside is never read into the answer, never counted (not in
``findings_dropped``, not in a limit) and its report never named, so an answer inside one
scope says nothing of the documents outside it. Reports are written over the whole graph:
a finding that cites documents of two scopes answers in neither.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from pydantic import Field

from graphrag_orm.chat.extractive import content_words
from graphrag_orm.citations import Citation, locate
from graphrag_orm.codes import ErrorCode, GlobalRefusal, LimitName
from graphrag_orm.communities.report_statements import ReportStatements
from graphrag_orm.communities.reports import evidence_item
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.layout import Layout
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import Store
from graphrag_orm.values import Limit, Options, Value

if TYPE_CHECKING:
    from graphrag_orm.retrieval.scope import ResolvedScope, Scope

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
        resolver: Callable[[Scope], Awaitable[ResolvedScope]] | None = None,
        scope: Scope | None = None,
    ) -> None:
        self.store = store
        self.options = options or GlobalOptions()
        self.statements = ReportStatements.of(ontology, model or for_layout(Layout.DEFAULT))
        #: Resolves a scope to its documents and ranges (the retriever's ``resolve_scope``).
        self.resolver = resolver
        #: The scope every answer keeps to unless :meth:`answer` names one (``rag.global_answers``:
        #: the retrieval options' own, as ``rag.answers`` keeps to it).
        self.scope = scope

    async def answer(
        self, question: str, options: GlobalOptions | None = None, *, scope: Scope | None = None
    ) -> GlobalAnswer:
        """Map over the reports, reduce to the relevant findings whose citations verify now; or refuse.

        ``scope`` (else the object's own): only findings whose every cited chunk lies inside
        it (see the module's docstring); it needs the ``resolver`` (``rag.global_answers``
        has the retriever's), else ``invalid-option``. Raises ``ScopeError`` as retrieval does for a bad scope.
        """
        options = options or self.options
        scope = scope if scope is not None else self.scope
        inside: ResolvedScope | None = None
        if scope is not None:
            if self.resolver is None:
                raise ConfigurationError(ErrorCode.INVALID_OPTION, "a scope needs GlobalAnswers(resolver=...)")
            inside = await self.resolver(scope)
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
        items: dict[str, EvidenceItem] = {}
        if inside is not None:
            # Every relevant finding's chunks, to keep only those wholly inside the scope.
            items = await self._items(sorted({chunk for *_, row in scored for chunk in row["chunkIds"]}))
            scored = [entry for entry in scored if _inside(entry[3]["chunkIds"], items, inside)]
            if not scored:
                return GlobalAnswer(question=question, refused=GlobalRefusal.NO_RELEVANT_FINDING)
        if len(scored) > options.max_findings:
            scored = scored[: options.max_findings]
            limits.append(Limit(name=LimitName.GLOBAL_FINDINGS, value=options.max_findings))
        if inside is None:
            items = await self._items(sorted({chunk for *_, row in scored for chunk in row["chunkIds"]}))
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

    async def _items(self, chunk_ids: Sequence[str]) -> dict[str, EvidenceItem]:
        """The chunks as stored now, with their documents, as citable passages."""
        items: dict[str, EvidenceItem] = {}
        for found in await self.store.read(self.statements.chunks, {"ids": list(chunk_ids)}, name="global.chunks"):
            items[found["chunk"]["id"]] = evidence_item(found["chunk"], found["document"])
        return items


def _inside(chunk_ids: Sequence[str], items: Mapping[str, EvidenceItem], scope: ResolvedScope) -> bool:
    """Whether every chunk a finding cites is stored and lies inside ``scope``."""
    for chunk_id in chunk_ids:
        item = items.get(chunk_id)
        if item is None or not scope.contains(item.document_id, item.start_byte, item.end_byte):
            return False
    return True


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
