"""``GraphRagTools``: the toolkit as function tools an agent calls, every call answered with a result.

Tools offered (:meth:`GraphRagTools.definitions`):

- ``answer_from_documents(question)``: :meth:`AnswersService.answer` under the tools'
  scope; checked citations (document, chunk, byte span, page, the *stored* quote) or
  a refusal with its reason. Offered only when the rag has a chat client.
- ``search_documents(query, limit)``: the retriever's items (1 to 20, default 5) with
  ids, spans and stored text, labelled as evidence, never as an answer.
- ``find_things(name, kind)`` and ``related_facts(thing_id)``, only with an ontology:
  up to 10 things from the ontology's names index, and up to 50 facts touching a
  thing, each with the documents that state it. More than that is reported in
  ``limitsReached``.
- ``answer_about_corpus(question)``, only with an ontology: a question about the whole
  corpus answered from the community reports (``rag.global_answers``: the chat model's map
  and reduce when the application has one, else offline), inside the tools' scope, every
  citation located in the stored text now; or a refusal with its code (``no-reports``,
  ``no-relevant-finding``, ``citation-not-found``, ``model-declined``, ``unreadable-reply``,
  ``no-verified-claim``). A failed model call is the tool's error with its code.

:meth:`GraphRagTools.call` never raises for what an agent sends: an unknown or
unoffered tool is ``unknown-tool``, arguments that do not match the schema are
``invalid-arguments``, and a toolkit error during the call keeps its own code
(``retrieval-failed``, ``rate-limited``, ...; a failed database read is
``retrieval-failed``). Only a cancellation or a bug propagates.

The scope is the application's: every tool searches inside it (things and facts
too: a thing is found only when a chunk inside the scope mentions it, and a fact is
kept only when the scope holds a document stating it, or a chunk of one mentioning
both its ends), and no argument can change or widen it.

Each call is one span (``GraphRag.Tool``, with the tool's name, counts, code and
timing) and one :class:`~graphrag_orm.tools.values.ToolCall` on the trail.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from neo4j.exceptions import DriverError, Neo4jError
from pydantic import Field

from graphrag_orm.chat.endpoint import model_schema
from graphrag_orm.citations import Citation
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import GraphRagError
from graphrag_orm.knowledge import KnowledgeReads
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval import RetrievalOptions, Scope
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.tenancy import Tenant, require_tenant
from graphrag_orm.tools.schemas import (
    BadArguments,
    Parameter,
    input_schema,
    parameters_of,
    read_arguments,
)
from graphrag_orm.tools.trail import TrailRecorder
from graphrag_orm.tools.values import (
    REFUSAL_NOTE,
    ToolAnswer,
    ToolCall,
    ToolError,
    ToolErrorCode,
    ToolEvidence,
    ToolFact,
    ToolFacts,
    ToolName,
    ToolPassage,
    ToolPassages,
    ToolResult,
    ToolThing,
    ToolThings,
)
from graphrag_orm.tracing import SpanName, SpanRecorder, span
from graphrag_orm.values import Limit, Options

if TYPE_CHECKING:
    from graphrag_orm.facade import GraphRag

__all__ = ["TOOL_SPAN", "GraphRagTools", "ToolOptions", "ToolSpec"]

#: The span of one tool call.
TOOL_SPAN: Final = SpanName.TOOL.value
#: Longest error message handed to an agent.
_MAX_MESSAGE: Final = 300

_DESCRIPTIONS: Final = {
    ToolName.ANSWER_FROM_DOCUMENTS: (
        "Answer a question from the stored documents. Returns the answer with citations the toolkit has "
        "checked against the stored text (document, chunk, byte span, page, quoted words), or a refusal "
        "with its reason when the documents do not answer it. Repeat the answer and citations as given."
    ),
    ToolName.SEARCH_DOCUMENTS: (
        "Find passages of the stored documents about a query, best first, with their ids, byte spans and "
        "text. Passages are evidence to read and quote, not an answer and not citations."
    ),
    ToolName.FIND_THINGS: (
        "Find things the documents name (by name or alias), optionally of one kind; at most 10, best "
        "match first, each with its thingId for related_facts."
    ),
    ToolName.RELATED_FACTS: (
        "List the facts touching a thing (by the thingId find_things gave), at most 50, each with the ids "
        "of the documents that state it."
    ),
    ToolName.ANSWER_ABOUT_CORPUS: (
        "Answer a question about the whole collection (themes, what recurs across documents) from the "
        "community reports. Returns findings with citations the toolkit has checked against the stored text, "
        "or a refusal with its reason. For a question about one thing or passage, use answer_from_documents."
    ),
}


class ToolOptions(Options):
    """Bounds of the tools; a value outside them is ``ConfigurationError("invalid-option")``."""

    search_limit: int = Field(5, ge=1, le=20, strict=True, description="passages when the agent gives no limit")
    max_things: int = Field(10, ge=1, le=10, strict=True, description="most things find_things returns")
    max_facts: int = Field(50, ge=1, le=50, strict=True, description="most facts related_facts returns")
    name_candidates: int = Field(
        200, ge=10, le=2_000, strict=True, description="names-index hits read before kind and scope filter them"
    )
    retrieval: RetrievalOptions | None = Field(
        None, description="retrieval for answers and search (the retriever's own by default)"
    )


@dataclass(frozen=True)
class ToolSpec:
    """One offered tool: its name, description and closed input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class _Outcome:
    value: ToolAnswer | ToolPassages | ToolThings | ToolFacts
    evidence: tuple[ToolEvidence, ...] = ()
    thing_ids: tuple[str, ...] = ()
    code: str | None = None


class _Refused(Exception):
    """A call refused with a code (internal: becomes an error result)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message


class GraphRagTools:
    """The agent tools of one connected :class:`~graphrag_orm.facade.GraphRag`.

    ``scope`` (a :data:`~graphrag_orm.retrieval.Scope`) keeps every tool inside it,
    whatever the agent sends; without it, the retrieval options' own scope holds.
    ``trail`` receives one :class:`ToolCall` per call. ``tenant`` binds every tool to
    one tenant (``rag.for_tenant(tenant)``); in a tenanted graph the tools are built bound
    to one (given here, or ``rag``'s own) or not at all (``TenantError("tenant-required")``).
    """

    def __init__(
        self,
        rag: GraphRag,
        options: ToolOptions | None = None,
        *,
        trail: TrailRecorder | None = None,
        scope: Scope | None = None,
        tenant: Tenant | str | None = None,
    ) -> None:
        if tenant is not None:
            rag = rag.for_tenant(tenant)
        require_tenant(rag.layout.tenanted, rag.tenant, "the agent tools")
        self.rag = rag
        self.options = options or ToolOptions()
        self.trail = trail
        retrieval = self.options.retrieval or rag.retriever.options
        self.scope: Scope | None = scope if scope is not None else retrieval.scope
        self.retrieval: RetrievalOptions = retrieval.with_scope(self.scope)
        self.ontology: Ontology | None = rag.ontology
        self._reads = KnowledgeReads(rag.store, rag.model, rag.ontology) if rag.ontology is not None else None
        offered = [ToolName.SEARCH_DOCUMENTS]
        if rag.answers is not None:
            offered.insert(0, ToolName.ANSWER_FROM_DOCUMENTS)
        if rag.ontology is not None:
            # In a tenanted graph the bound tenant's community reports (docs/tenancy.md).
            offered += [ToolName.FIND_THINGS, ToolName.RELATED_FACTS, ToolName.ANSWER_ABOUT_CORPUS]
        kinds = rag.ontology.kinds if rag.ontology is not None else ()
        self._parameters: dict[ToolName, dict[str, Parameter]] = {
            tool: parameters_of(
                tool,
                max_question_chars=self.retrieval.max_question_chars,
                search_default=self.options.search_limit,
                kinds=kinds,
            )
            for tool in offered
        }
        self._handlers: dict[ToolName, Callable[[dict[str, Any]], Awaitable[_Outcome]]] = {
            ToolName.ANSWER_FROM_DOCUMENTS: self._answer,
            ToolName.SEARCH_DOCUMENTS: self._search,
            ToolName.FIND_THINGS: self._find_things,
            ToolName.RELATED_FACTS: self._related_facts,
            ToolName.ANSWER_ABOUT_CORPUS: self._answer_about_corpus,
        }

    @property
    def names(self) -> tuple[str, ...]:
        """The offered tools' names, in the order of :meth:`definitions`."""
        return tuple(tool.value for tool in self._parameters)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The offered tools with their input schemas (what MCP lists)."""
        return tuple(
            ToolSpec(tool.value, _DESCRIPTIONS[tool], input_schema(parameters))
            for tool, parameters in self._parameters.items()
        )

    def definitions(self) -> list[dict[str, Any]]:
        """OpenAI function tools: ``{"type": "function", "function": {name, description, parameters}}``.

        The parameters are the model-facing schema (:func:`~graphrag_orm.chat.endpoint.model_schema`):
        no string length bounds, which grammar converters of local servers expand rule by rule
        and fail on; the bounds are in the descriptions and :meth:`call` enforces them.
        """
        return [
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": model_schema(spec.input_schema),
                },
            }
            for spec in self.specs()
        ]

    async def call(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> ToolResult:
        """Run tool ``name`` with ``arguments`` (JSON text or a mapping); never raises for bad input."""
        began = time.perf_counter()
        tool = self._offered(name)
        # Only an offered tool's name is recorded: an agent's unknown name is arbitrary text.
        # A cancellation or a bug escaping the call marks the span with its type, then propagates.
        with span(SpanName.TOOL, tool=tool.value if tool is not None else "unknown") as traced:
            try:
                result, call = await self._run(tool, name, arguments, began, traced)
            finally:
                traced.set("elapsed_ms", round((time.perf_counter() - began) * 1000, 3))
        if self.trail is not None:
            self.trail.record(call)
        return result

    async def _run(
        self,
        tool: ToolName | None,
        name: object,
        arguments: str | Mapping[str, Any] | None,
        began: float,
        traced: SpanRecorder,
    ) -> tuple[ToolResult, ToolCall]:
        recorded: dict[str, Any] = {}
        try:
            if tool is None:
                raise _Refused(
                    ToolErrorCode.UNKNOWN_TOOL, f"no tool named {_shown(name)!r}; the tools are {', '.join(self.names)}"
                )
            try:
                recorded = read_arguments(arguments, self._parameters[tool])
            except BadArguments as bad:
                raise _Refused(ToolErrorCode.INVALID_ARGUMENTS, f"{tool.value}: {bad.message}") from None
            try:
                outcome = await self._handlers[tool](recorded)
            except GraphRagError as error:
                raise _Refused(error.code, error.message) from None
            except (Neo4jError, DriverError) as error:
                raise _Refused(ErrorCode.RETRIEVAL_FAILED, f"a database read failed: {type(error).__name__}") from None
        except _Refused as refused:
            shown = tool.value if tool is not None else _shown(name)
            message = " ".join(refused.message.split())[:_MAX_MESSAGE]
            traced.fail(refused.code)
            result = ToolResult(tool=shown, error=ToolError(code=refused.code, message=message))
            return result, self._call(shown, recorded, began, (), (), refused.code)
        _trace(traced, outcome)
        call = self._call(tool.value, recorded, began, outcome.evidence, outcome.thing_ids, outcome.code)
        return ToolResult(tool=tool.value, value=outcome.value), call

    async def _answer(self, arguments: dict[str, Any]) -> _Outcome:
        answers = self.rag.answers
        assert answers is not None  # offered only with a chat client
        answer = await answers.answer(arguments["question"], retrieval=self.retrieval)
        refused = None if answer.answered else str(answer.reason)
        return _answer_outcome(answer.text, answer.citations, refused, answer.evidence.limits_reached)

    async def _search(self, arguments: dict[str, Any]) -> _Outcome:
        options = self.retrieval.model_copy(update={"max_items": arguments["limit"]})
        evidence = await self.rag.retriever.retrieve(arguments["query"], options)
        passages = tuple(
            ToolPassage(
                chunk_id=item.chunk_id,
                document_id=item.document_id,
                source_uri=item.source_uri,
                title=item.title,
                start_byte=item.start_byte,
                end_byte=item.end_byte,
                page=item.page_of(item.start_byte),
                text=item.text,
                score=item.score,
                grounding=item.grounding,
                text_origin=item.text_origin,
            )
            for item in evidence.items
        )
        spans = tuple(
            ToolEvidence(document_id=p.document_id, chunk_id=p.chunk_id, start_byte=p.start_byte, end_byte=p.end_byte)
            for p in passages
        )
        return _Outcome(ToolPassages(passages=passages, limits_reached=evidence.limits_reached), spans)

    async def _find_things(self, arguments: dict[str, Any]) -> _Outcome:
        found = await self._knowledge().find_things(
            arguments["name"],
            kind=arguments["kind"],
            scope=await self._resolved_scope(),
            candidates=self.options.name_candidates,
            max_things=self.options.max_things,
        )
        things = tuple(ToolThing(**thing.model_dump()) for thing in found.things)
        value = ToolThings(things=things, limits_reached=found.limits_reached)
        return _Outcome(value, thing_ids=tuple(thing.thing_id for thing in things))

    async def _related_facts(self, arguments: dict[str, Any]) -> _Outcome:
        thing_id: str = arguments["thing_id"]
        found = await self._knowledge().related_facts(
            thing_id, scope=await self._resolved_scope(), limit=self.options.max_facts
        )
        if not found.found:
            return _Outcome(ToolFacts(thing_id=thing_id, found=False, facts=()), code="not-found")
        facts = tuple(ToolFact(**fact.model_dump()) for fact in found.facts)
        stated = dict.fromkeys(d for fact in facts for d in fact.document_ids)
        things = dict.fromkeys(end for fact in facts for end in (fact.source_id, fact.target_id))
        value = ToolFacts(thing_id=thing_id, found=True, facts=facts, limits_reached=found.limits_reached)
        return _Outcome(value, tuple(ToolEvidence(document_id=d) for d in stated), tuple(things))

    async def _answer_about_corpus(self, arguments: dict[str, Any]) -> _Outcome:
        corpus = self.rag.global_answers
        assert corpus is not None  # offered only with an ontology
        answer = await corpus.answer(arguments["question"], scope=self.scope)
        refused = None if answer.refused is None else str(answer.refused)
        return _answer_outcome(answer.answer, answer.citations, refused, answer.limits_reached)

    def _offered(self, name: object) -> ToolName | None:
        if not isinstance(name, str):
            return None
        try:
            tool = ToolName(name)
        except ValueError:
            return None
        return tool if tool in self._parameters else None

    def _knowledge(self) -> KnowledgeReads:
        assert self._reads is not None  # the knowledge tools are offered only with an ontology
        return self._reads

    async def _resolved_scope(self) -> ResolvedScope | None:
        if self.scope is None:
            return None
        return await self.rag.retriever.resolve_scope(self.scope)

    @staticmethod
    def _call(
        tool: str,
        arguments: dict[str, Any],
        began: float,
        evidence: tuple[ToolEvidence, ...],
        thing_ids: tuple[str, ...],
        code: str | None,
    ) -> ToolCall:
        return ToolCall(
            tool=tool,
            arguments=arguments,
            evidence=evidence,
            thing_ids=thing_ids,
            code=code,
            elapsed_ms=round((time.perf_counter() - began) * 1000, 3),
        )


def _answer_outcome(
    text: str | None, citations: tuple[Citation, ...], refused: str | None, limits: tuple[Limit, ...]
) -> _Outcome:
    """An answer tool's result: the text and its located citations (their spans as evidence), or the refusal."""
    if refused is not None:
        value = ToolAnswer(answered=False, reason=refused, note=REFUSAL_NOTE, limits_reached=limits)
        return _Outcome(value, code=refused)
    evidence = tuple(
        ToolEvidence(document_id=c.document_id, chunk_id=c.chunk_id, start_byte=c.start_byte, end_byte=c.end_byte)
        for c in citations
    )
    return _Outcome(ToolAnswer(answered=True, text=text, citations=citations, limits_reached=limits), evidence)


def _shown(name: object) -> str:
    """An unknown tool name as shown back: one line, at most 60 characters."""
    text = name if isinstance(name, str) else type(name).__name__
    return " ".join(text.split())[:60]


def _trace(traced: SpanRecorder, outcome: _Outcome) -> None:
    """Counts and codes only: never the arguments, text or quotes."""
    value = outcome.value
    if isinstance(value, ToolAnswer):
        traced.set("disposition", "Answered" if value.answered else "InsufficientEvidence")
        traced.set("citations", len(value.citations))
        if value.reason is not None:
            traced.set("reason", value.reason)
    elif isinstance(value, ToolPassages):
        traced.set("items", len(value.passages))
    elif isinstance(value, ToolThings):
        traced.set("entities", len(value.things))
    else:
        traced.set("facts", len(value.facts))
    if value.limits_reached:
        traced.set("limits", [str(limit.name) for limit in value.limits_reached])
