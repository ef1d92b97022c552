"""What retrieval returns and answers cite: evidence items, context and provenance.

An evidence item's ``text`` is always exactly the stored bytes
``[start_byte, end_byte)`` of its document (or, for a chunk-grounded item, of its
chunk); a cut item's ``end_byte`` is the cut. Context items help a model read and
are never cited. In JSON an item leaves out ``pages`` and ``textOrigin`` when they are
unset (a document without pages, a source's own text), as citations do.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StringConstraints,
    field_validator,
    model_serializer,
)
from pydantic.alias_generators import to_camel

from graphrag_orm.sources import clean_title
from graphrag_orm.values import Limit, Value

__all__ = [
    "GROUNDING_PROPERTY",
    "ContextItem",
    "Evidence",
    "EvidenceItem",
    "Grounding",
    "PageStart",
    "Provenance",
    "Rewrite",
    "Route",
    "RouteName",
    "RouteRank",
    "ScopeRoute",
    "ScopeStrategy",
    "ScopeTrace",
    "leave_out_source_grounding",
    "leave_out_unset",
]


def leave_out_unset(data: Any, info: SerializationInfo, fields: Iterable[str]) -> Any:
    """``data`` (a value's serialized dict) without those of ``fields`` that are None, in JSON mode only.

    Python-mode dumps keep every field, so code reading a dump by name still finds it.
    """
    if not info.mode_is_json() or not isinstance(data, dict):
        return data
    for name in fields:
        for key in (name, to_camel(name)):
            if key in data and data[key] is None:
                del data[key]
    return data


class Route(StrEnum):
    """The toolkit's retrieval routes; items keep the rank each route gave them."""

    VECTOR = "Vector"
    FULL_TEXT = "FullText"
    GRAPH = "Graph"


def _known_route(name: str) -> str:
    """A toolkit route's name as its :class:`Route` member; any other name as it is."""
    return Route(name) if name in Route._value2member_map_ else name


#: A route's name: one of :class:`Route` (validated to the member), or an application's own
#: route's (a letter, then up to 39 letters, digits, ``_`` or ``-``); it is written into the
#: retrieval's statement.
RouteName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,39}$"), AfterValidator(_known_route)]


class Grounding(StrEnum):
    """What a span is a span of: the source document's bytes, or only the stored chunk's.

    A chunk stores ``Chunk`` under :data:`GROUNDING_PROPERTY` when only its own text is
    known (an adopted chunk no source file placed); no value means ``Source``.
    """

    SOURCE = "Source"
    CHUNK = "Chunk"

    @classmethod
    def stored(cls, value: object) -> Grounding:
        """The grounding a chunk's stored value names: ``Chunk`` only for ``"Chunk"``, else ``Source``."""
        return cls.CHUNK if value == cls.CHUNK.value else cls.SOURCE


#: The chunk property holding its grounding (written by adoption; absent on ingested chunks).
GROUNDING_PROPERTY = "grounding"


def leave_out_source_grounding(data: Any, info: SerializationInfo) -> Any:
    """``data`` without ``grounding`` when it is ``Source``, in JSON mode only.

    For views that named no grounding before chunk-grounded documents existed (search
    passages, tool passages): their JSON for source-grounded documents stays as it was.
    """
    if info.mode_is_json() and isinstance(data, dict) and data.get("grounding") == Grounding.SOURCE.value:
        del data["grounding"]
    return data


class RouteRank(Value):
    """One route's view of an item: its 1-based rank, native score and RRF share."""

    route: RouteName
    rank: int = Field(ge=1)
    native_score: float
    rank_score: float


class PageStart(Value):
    """A page (1-based) and the document byte offset where it starts."""

    page: int = Field(ge=1)
    start_byte: int = Field(ge=0)


class EvidenceItem(Value):
    """A citable passage: a chunk, or the part of it the budget kept.

    ``pages`` lists the pages the item touches, each with the document offset where
    the page starts (the first may start before the item); ``None`` for documents
    without pages. ``title`` is the document's, cleaned and bounded to 500 characters
    (:func:`~graphrag_orm.sources.clean_title`) even when it was stored before the bound;
    the evidence budget counts its bytes in every item.
    """

    chunk_id: str
    document_id: str
    source_uri: str
    title: str | None = None
    text: str
    start_byte: int = Field(ge=0)
    end_byte: int = Field(ge=0)
    score: float
    routes: tuple[RouteRank, ...] = ()
    pages: tuple[PageStart, ...] | None = None
    grounding: Grounding = Grounding.SOURCE
    text_origin: str | None = None

    @field_validator("title")
    @classmethod
    def _clean_title(cls, title: str | None) -> str | None:
        return clean_title(title)

    @model_serializer(mode="wrap")
    def _json_leaves_out_unset(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        return leave_out_unset(handler(self), info, ("pages", "text_origin"))

    def page_of(self, byte_offset: int) -> int | None:
        """The page holding ``byte_offset`` (a document offset), or None without pages."""
        if not self.pages:
            return None
        page = self.pages[0].page
        for start in self.pages:
            if start.start_byte <= byte_offset:
                page = start.page
            else:
                break
        return page


class ContextItem(Value):
    """Text shown to the model to help it read; never a citation."""

    chunk_id: str | None = None
    text: str
    reason: str


class Provenance(Value):
    """Where the evidence came from: server, embedding set, indexes, similarity."""

    server_version: str
    embedding_set_id: str
    indexes: tuple[str, ...]
    similarity: str | None = None


class ScopeStrategy(StrEnum):
    """How a route searched inside a scope."""

    EXACT = "exact"
    OVER_FETCH = "over-fetch"
    IN_INDEX = "in-index"
    EMPTY = "empty"


class ScopeRoute(Value):
    """One route inside a scope: its strategy, candidates asked for and kept."""

    route: RouteName
    strategy: ScopeStrategy
    asked: int
    kept: int


class ScopeTrace(Value):
    """What the scope resolved to and how each route searched inside it."""

    kind: str
    documents: int
    chunks: int
    routes: tuple[ScopeRoute, ...] = ()


class Rewrite(Value):
    """A follow-up rewritten to stand alone: the question asked, the standalone one, turns used, outcome."""

    asked: str
    standalone: str
    turns_used: int
    outcome: str


class Evidence(Value):
    """The ranked, budgeted evidence for one question."""

    question: str
    items: tuple[EvidenceItem, ...]
    context: tuple[ContextItem, ...] = ()
    utf8_bytes: int = 0
    omitted_items: int = 0
    limits_reached: tuple[Limit, ...] = ()
    provenance: Provenance | None = None
    scope: ScopeTrace | None = None
    rewrite: Rewrite | None = None

    def item(self, chunk_id: str) -> EvidenceItem | None:
        """The evidence item of ``chunk_id``, or None when it is not evidence (context never is)."""
        for candidate in self.items:
            if candidate.chunk_id == chunk_id:
                return candidate
        return None
