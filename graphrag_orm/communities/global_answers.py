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

**With a chat model** (``GlobalAnswers(chat=...)``; ``rag.global_answers`` passes the
application's chat client unless it is a stand-in), the map and the reduce are the model's,
over the same findings under the same scope: :mod:`graphrag_orm.communities.global_model`.

**In a tenanted graph** (docs/tenancy.md) an answer is the bound tenant's: only its reports
and findings are read, and every citation is located in the tenant's chunks as stored now.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from graphrag_orm.chat import ChatClient
from graphrag_orm.chat.extractive import content_words
from graphrag_orm.citations import Citation, locate
from graphrag_orm.codes import ErrorCode, GlobalRefusal, LimitName
from graphrag_orm.communities.options import GlobalOptions
from graphrag_orm.communities.report_statements import ReportStatements
from graphrag_orm.communities.reports import evidence_item
from graphrag_orm.communities.values import OFFLINE_WRITER, GlobalAnswer, GlobalClaim
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.layout import Layout
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import Store
from graphrag_orm.tenancy import check_fenced
from graphrag_orm.tracing import SpanName, SpanRecorder, span
from graphrag_orm.values import Limit

if TYPE_CHECKING:
    from graphrag_orm.retrieval.scope import ResolvedScope, Scope

__all__ = ["GLOBAL_NOTE", "OFFLINE_WRITER", "GlobalAnswer", "GlobalAnswers", "GlobalClaim", "GlobalOptions"]

#: Said after every offline global answer: no model wrote it.
GLOBAL_NOTE: Final = " (From the community reports; no model wrote this answer.)"


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
        chat: ChatClient | None = None,
    ) -> None:
        model = model or for_layout(Layout.DEFAULT)
        # A tenanted graph's reports and chunks are the tenant's, in each statement (docs/tenancy.md).
        check_fenced(model.layout.tenanted, store.tenanted, "global answers")
        self.store = store
        #: The chat model of the map and reduce; None answers offline (word overlap, no model).
        self.chat = chat
        self.options = options or GlobalOptions()
        self.statements = ReportStatements.of(ontology, model)
        #: Resolves a scope to its documents and ranges (the retriever's ``resolve_scope``).
        self.resolver = resolver
        #: The scope every answer keeps to unless :meth:`answer` names one (``rag.global_answers``:
        #: the retrieval options' own, as ``rag.answers`` keeps to it).
        self.scope = scope

    async def answer(
        self, question: str, options: GlobalOptions | None = None, *, scope: Scope | None = None
    ) -> GlobalAnswer:
        """Map over the reports, reduce to what the findings whose citations verify now support; or refuse.

        With ``chat``, the model's map and reduce (:mod:`graphrag_orm.communities.global_model`),
        else the offline word overlap. ``scope`` (else the object's own): only findings whose
        every cited chunk lies inside it (see the module's docstring); it needs the
        ``resolver`` (``rag.global_answers`` has the retriever's), else ``invalid-option``.
        Raises ``ScopeError`` as retrieval does for a bad scope, and ``ModelCallFailed``
        (a code) when a model call fails.
        """
        options = options or self.options
        scope = scope if scope is not None else self.scope
        began = time.perf_counter()
        with span(SpanName.GLOBAL_ANSWER, phase="model" if self.chat is not None else "offline") as traced:
            inside: ResolvedScope | None = None
            if scope is not None:
                if self.resolver is None:
                    raise ConfigurationError(ErrorCode.INVALID_OPTION, "a scope needs GlobalAnswers(resolver=...)")
                inside = await self.resolver(scope)
                traced.set("scope", scope.kind)
            if self.chat is None:
                answer = await self._offline(question, options, inside)
            else:
                answer = await self._by_model(self.chat, question, options, inside)
            _trace(traced, answer, began)
            return answer

    async def _reports(self, options: GlobalOptions) -> tuple[list[dict[str, Any]], list[Limit]]:
        """The stored reports, coarsest level first, at most ``max_reports`` (``GlobalReports`` past it)."""
        rows = list(
            await self.store.read(self.statements.listing, {"limit": options.max_reports + 1}, name="global.reports")
        )
        if len(rows) > options.max_reports:
            return [dict(row) for row in rows[: options.max_reports]], [
                Limit(name=LimitName.GLOBAL_REPORTS, value=options.max_reports)
            ]
        return [dict(row) for row in rows], []

    async def _findings(self, report_ids: Sequence[str]) -> list[dict[str, Any]]:
        rows = await self.store.read(self.statements.findings_of, {"ids": list(report_ids)}, name="global.findings")
        return [dict(row) for row in rows]

    async def _by_model(
        self, chat: ChatClient, question: str, options: GlobalOptions, inside: ResolvedScope | None
    ) -> GlobalAnswer:
        """The model's map and reduce over every finding of the reports read (inside the scope)."""
        from graphrag_orm.communities.global_model import ModelMapReduce

        writer = str(getattr(chat, "model", None) or type(chat).__name__)
        rows, limits = await self._reports(options)
        if not rows:
            return GlobalAnswer(
                question=question, refused=GlobalRefusal.NO_REPORTS, writer=writer, limits_reached=tuple(limits)
            )
        findings = await self._findings([row["id"] for row in rows])
        if inside is not None:
            items = await self._items(sorted({chunk for row in findings for chunk in row["chunkIds"]}))
            findings = [row for row in findings if _inside(row["chunkIds"], items, inside)]
        if not findings:
            return GlobalAnswer(
                question=question,
                refused=GlobalRefusal.NO_RELEVANT_FINDING,
                writer=writer,
                limits_reached=tuple(limits) if inside is None else (),
            )
        return await ModelMapReduce(chat, options).answer(question, writer, rows, findings, self._items, limits)

    async def _offline(self, question: str, options: GlobalOptions, inside: ResolvedScope | None) -> GlobalAnswer:
        """The word-overlap map and reduce (the module's docstring)."""
        rows, limits = await self._reports(options)
        if not rows:
            return GlobalAnswer(question=question, refused=GlobalRefusal.NO_REPORTS, limits_reached=tuple(limits))
        order = {row["id"]: index for index, row in enumerate(rows)}
        wanted = content_words(question)
        need = 1 if len(wanted) == 1 else 2
        scored: list[tuple[int, int, int, dict[str, Any]]] = []
        for position, row in enumerate(await self._findings(list(order))):
            words = content_words(" ".join([row["text"], *row["quotes"]]))
            shared = len(wanted & words)
            if wanted and shared >= need:
                scored.append((-shared, order[row["report"]], position, row))
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
        claims: list[GlobalClaim] = []
        citations: list[Citation] = []
        reports: list[str] = []
        dropped = 0
        for *_, row in scored:
            located = _located(row, items)
            if located is None:
                dropped += 1
                continue
            claims.append(GlobalClaim(text=row["text"], citations=located))
            citations.extend(c for c in located if c not in citations)
            if row["report"] not in reports:
                reports.append(row["report"])
        if not claims:
            return GlobalAnswer(
                question=question,
                refused=GlobalRefusal.CITATION_NOT_FOUND,
                findings_dropped=dropped,
                limits_reached=tuple(limits),
            )
        return GlobalAnswer(
            question=question,
            answer=" ".join(claim.text for claim in claims) + GLOBAL_NOTE,
            citations=tuple(citations),
            claims=tuple(claims),
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


def _trace(traced: SpanRecorder, answer: GlobalAnswer, began: float) -> None:
    """Counts, codes and timings only: never the question, a finding or a quote."""
    if answer.refused is not None:
        traced.set("reason", answer.refused.value)
    traced.set("citations", len(answer.citations))
    traced.set("reports", len(answer.reports))
    traced.set("items", answer.findings_shown)
    traced.set("findings_dropped", answer.findings_dropped)
    traced.set("findings_invented", answer.findings_invented)
    traced.set("calls", answer.calls)
    traced.set("input_tokens", answer.input_tokens)
    traced.set("output_tokens", answer.output_tokens)
    traced.set("limits", [limit.name for limit in answer.limits_reached])
    traced.set("elapsed_ms", round((time.perf_counter() - began) * 1000, 3))
