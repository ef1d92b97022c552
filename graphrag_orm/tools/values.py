"""What the agent tools return, and what the trail records of each call.

Every result is a frozen value whose JSON (camelCase, ``to_payload()``) is what an agent
reads. Results carry ids and byte spans; passages carry the stored text of their span,
answers the stored text of each cited span. The trail's records never carry document text.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from graphrag_orm.citations import Citation
from graphrag_orm.codes import ToolErrorCode
from graphrag_orm.evidence import Grounding, leave_out_source_grounding, leave_out_unset
from graphrag_orm.knowledge.values import FactFound, ThingFound
from graphrag_orm.values import Limit, Value

__all__ = [
    "EVIDENCE_LABEL",
    "REFUSAL_NOTE",
    "ToolAnswer",
    "ToolCall",
    "ToolError",
    "ToolErrorCode",
    "ToolEvidence",
    "ToolFact",
    "ToolFacts",
    "ToolName",
    "ToolPassage",
    "ToolPassages",
    "ToolResult",
    "ToolThing",
    "ToolThings",
]

#: How search results are labelled to the agent.
EVIDENCE_LABEL = "evidence to read and quote, not an answer"
#: What a refusal tells the agent to say.
REFUSAL_NOTE = "The documents do not answer this question. Say so; do not answer it from elsewhere."


class ToolName(StrEnum):
    """The five tools; the last three exist only with an ontology."""

    ANSWER_FROM_DOCUMENTS = "answer_from_documents"
    SEARCH_DOCUMENTS = "search_documents"
    FIND_THINGS = "find_things"
    RELATED_FACTS = "related_facts"
    ANSWER_ABOUT_CORPUS = "answer_about_corpus"


class ToolError(Value):
    """A call that failed: a stable code and a one-line message (never a traceback or stored text)."""

    code: str
    message: str


class ToolAnswer(Value):
    """``answer_from_documents`` and ``answer_about_corpus``: the answer with checked citations, or a refusal with its reason.

    ``answered``: ``text`` is the answer, ``citations`` the located quotes (each the
    *stored* text at its span), at least one. Refused: ``reason`` is a refusal reason
    (``no-evidence``, ``model-declined``, ``no-reports``, ...), ``text`` is ``None``, ``citations`` is
    empty and ``note`` says what to tell the user.
    """

    kind: Literal["answer"] = "answer"
    answered: bool
    text: str | None = None
    citations: tuple[Citation, ...] = ()
    reason: str | None = None
    note: str | None = None
    limits_reached: tuple[Limit, ...] = ()


class ToolPassage(Value):
    """A passage found by ``search_documents``: its ids, byte span, page and stored text.

    ``grounding`` and ``text_origin`` are the evidence item's; JSON names them only for a
    chunk-grounded passage (its span is in the stored chunk's own text) and for derived text.
    """

    chunk_id: str
    document_id: str
    source_uri: str
    title: str | None = None
    start_byte: int = Field(ge=0)
    end_byte: int = Field(ge=0)
    page: int | None = None
    text: str
    score: float
    grounding: Grounding = Grounding.SOURCE
    text_origin: str | None = None

    @model_serializer(mode="wrap")
    def _json_leaves_out_unset(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = leave_out_unset(handler(self), info, ("title", "page", "text_origin"))
        return leave_out_source_grounding(data, info)


class ToolPassages(Value):
    """``search_documents``: passages best first, labelled as evidence (never citations of their own)."""

    kind: Literal["passages"] = "passages"
    label: str = EVIDENCE_LABEL
    passages: tuple[ToolPassage, ...]
    limits_reached: tuple[Limit, ...] = ()


class ToolThing(ThingFound):
    """A thing of the ontology whose name or alias matched: its id, kind, name and aliases."""


class ToolThings(Value):
    """``find_things``: at most 10 things, best match first."""

    kind: Literal["things"] = "things"
    things: tuple[ToolThing, ...]
    limits_reached: tuple[Limit, ...] = ()


class ToolFact(FactFound):
    """A fact touching the thing: its type, both ends, and the documents that state it."""


class ToolFacts(Value):
    """``related_facts``: at most 50 facts touching ``thing_id``; ``found`` is ``False`` for an unknown id."""

    kind: Literal["facts"] = "facts"
    thing_id: str
    found: bool
    facts: tuple[ToolFact, ...]
    limits_reached: tuple[Limit, ...] = ()


class ToolResult(Value):
    """One call's outcome: ``value`` when it worked, else ``error``.

    A refusal is a result that worked (``value`` is a :class:`ToolAnswer` with
    ``answered`` false), not an error.
    """

    tool: str
    value: ToolAnswer | ToolPassages | ToolThings | ToolFacts | None = None
    error: ToolError | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    def to_payload(self) -> dict[str, Any]:
        """The JSON object an agent reads: the value's fields, or ``{"error": {"code", "message"}}``."""
        if self.error is not None:
            return {"error": self.error.model_dump(mode="json", by_alias=True)}
        assert self.value is not None
        payload: dict[str, Any] = self.value.model_dump(mode="json", by_alias=True)
        return payload


class ToolEvidence(Value):
    """A span a result returned: document, chunk (None for a fact's document) and bytes."""

    document_id: str
    chunk_id: str | None = None
    start_byte: int | None = None
    end_byte: int | None = None


class ToolCall(Value):
    """What the trail records of one call: never document text, quotes or answers.

    ``arguments`` are the call's parsed arguments (``{}`` when they were not a JSON
    object); ``evidence`` the spans and documents the result returned; ``thing_ids``
    the things it returned (a fact's both ends); ``code`` the error code, the refusal
    reason, or ``not-found`` for the facts of an unknown thing; ``None`` otherwise.
    """

    tool: str
    arguments: dict[str, Any]
    evidence: tuple[ToolEvidence, ...] = ()
    thing_ids: tuple[str, ...] = ()
    code: str | None = None
    elapsed_ms: float = Field(ge=0.0)
