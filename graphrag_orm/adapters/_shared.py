"""What the LangChain and LlamaIndex adapters share: evidence as metadata, the scope, the fingerprint.

Nothing here imports LangChain or LlamaIndex; the two adapter modules do, and only they.

- :func:`evidence_metadata`: the same keys on a LangChain ``Document`` and a LlamaIndex
  ``TextNode``, camelCase as in the toolkit's JSON. They describe *evidence*: passages
  to read and quote, ranked by retrieval. They are not checked citations; only
  ``rag.answers`` checks a citation against the stored bytes. ``score`` is one users can
  threshold (:func:`relative_scores`); ``title`` is left out when the document has none.
- :func:`fixed_options`: the retrieval options with the application's scope, fixed when
  the adapter is built; a caller's query never changes it.
- :func:`adapter_fingerprint`: the chunker fingerprint of another library's splitter
  (:func:`~graphrag_orm.ingestion.chunkers.fingerprint_of`: its type, its library's version
  and its settings) with the adapter's name and version. Changing any of them changes the
  chunk ids, as changing the toolkit's own chunker does.
- :class:`ByteOffsets`: character spans of a text as UTF-8 byte spans (hints for the
  locator, which checks them).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import Evidence, EvidenceItem
from graphrag_orm.facade import GraphRag
from graphrag_orm.ingestion import fingerprint_of
from graphrag_orm.retrieval import RetrievalOptions, Scope
from graphrag_orm.sync import SyncGraphRag
from graphrag_orm.tenancy import Tenant, require_tenant

__all__ = [
    "ADAPTER_VERSION",
    "EVIDENCE_KIND",
    "ByteOffsets",
    "adapter_fingerprint",
    "bound_rag",
    "evidence_metadata",
    "fixed_options",
    "invalid_fields",
    "relative_scores",
    "retrieval_options_of",
]

#: Joins every adapter fingerprint: a change in how chunks are carried over changes chunk ids.
ADAPTER_VERSION = "1"

#: The ``kind`` of every retrieved passage: evidence to read, never a checked citation.
EVIDENCE_KIND = "evidence"


def relative_scores(evidence: Evidence) -> tuple[float, ...]:
    """Each item's fused score as a fraction of the best one of this result list: 1.0 for the first, 0..1.

    Fused scores are sums of reciprocal ranks (about 0.03 at best), so a usual cut-off such
    as LlamaIndex's ``SimilarityPostprocessor(similarity_cutoff=0.5)`` would drop every
    item; relative to the best item, 0.5 keeps what scored at least half as well. The order
    is the fused order. All zeros when no item scored above zero.
    """
    best = max((item.score for item in evidence.items), default=0.0)
    if best <= 0:
        return tuple(0.0 for _ in evidence.items)
    return tuple(min(1.0, max(0.0, item.score / best)) for item in evidence.items)


def evidence_metadata(item: EvidenceItem, evidence: Evidence, score: float) -> dict[str, Any]:
    """The metadata of one retrieved passage: ids, span, scores, routes, pages and what was left out.

    ``score`` is the item's relative score (:func:`relative_scores`), ``fusedScore`` its
    fused score. ``title`` is there only when the document has one, so no model reads
    ``title: None``. ``limitsReached`` and ``omittedItems`` are the retrieval's (the same on
    every passage of one call), so a limit reached is never silent. ``citationChecked`` is
    always False.
    """
    metadata: dict[str, Any] = {
        "kind": EVIDENCE_KIND,
        "citationChecked": False,
        "chunkId": item.chunk_id,
        "documentId": item.document_id,
        "sourceUri": item.source_uri,
        "startByte": item.start_byte,
        "endByte": item.end_byte,
        "score": score,
        "fusedScore": item.score,
        "routes": [rank.model_dump(mode="json", by_alias=True) for rank in item.routes],
        "pages": None if item.pages is None else [page.page for page in item.pages],
        "grounding": item.grounding.value,
        "textOrigin": item.text_origin,
        "omittedItems": evidence.omitted_items,
        "limitsReached": [str(limit.name) for limit in evidence.limits_reached],
    }
    if item.title:
        metadata["title"] = item.title
    return metadata


def adapter_fingerprint(adapter: str, splitter: object) -> str:
    """``splitter``'s fingerprint with the adapter's name and :data:`ADAPTER_VERSION` joined to it."""
    return fingerprint_of(splitter, f"graphrag-orm.adapters.{adapter}/{ADAPTER_VERSION}")


def invalid_fields(owner: str, error: ValidationError) -> ConfigurationError:
    """A validation error of an adapter's fields as ``ConfigurationError("invalid-option")``, on one line."""
    problems = "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or owner}: {item['msg']}" for item in error.errors()
    )
    return ConfigurationError(ErrorCode.INVALID_OPTION, f"{owner}: {problems}")


def bound_rag(rag: GraphRag | SyncGraphRag, tenant: Tenant | str | None, owner: str) -> GraphRag | SyncGraphRag:
    """``rag`` bound to ``tenant`` (``for_tenant``: a blocking twin's view runs on the twin's
    loop), or as it is without one. In a tenanted graph, a rag bound to no tenant is
    ``tenant-required``.
    """
    if tenant is not None:
        rag = rag.for_tenant(tenant)
    facade = rag.rag if isinstance(rag, SyncGraphRag) else rag
    require_tenant(facade.layout.tenanted, facade.tenant, owner)
    return rag


def retrieval_options_of(rag: GraphRag | SyncGraphRag) -> RetrievalOptions:
    """The retrieval options the facade was built with."""
    facade = rag.rag if isinstance(rag, SyncGraphRag) else rag
    return facade.retriever.options


def fixed_options(base: RetrievalOptions, scope: Scope | None) -> RetrievalOptions:
    """``base`` with the application's ``scope``; a scope given twice, differently, is refused.

    Raises ``ConfigurationError("invalid-option")`` when ``base`` already has another scope,
    or ``scope`` is not one.
    """
    if scope is None:
        return base
    if base.scope is not None and base.scope != scope:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, "the scope is given twice (in the options and as scope); give it once"
        )
    # Built anew, not copied, so a scope given as a mapping is validated (and refused with a code).
    fields = {name: getattr(base, name) for name in type(base).model_fields}
    return type(base)(**{**fields, "scope": scope})


class ByteOffsets:
    """Character offsets of one text as UTF-8 byte offsets, for the hints of chunks in document order.

    Each conversion encodes only the text between the previous offset and this one, so a
    document's chunks in order (overlapping or not) cost about one pass over the text.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._char = 0
        self._byte = 0

    def at(self, char_index: int) -> int:
        """The byte offset of ``char_index`` (0..len(text))."""
        if char_index >= self._char:
            self._byte += _utf8_length(self.text[self._char : char_index])
        else:
            self._byte -= _utf8_length(self.text[char_index : self._char])
        self._char = char_index
        return self._byte

    def span(self, start_char: int, end_char: int) -> tuple[int, int] | None:
        """``text[start_char:end_char]`` as a byte span, or None when it is not a span of the text."""
        if not 0 <= start_char <= end_char <= len(self.text):
            return None
        start = self.at(start_char)
        return start, start + _utf8_length(self.text[start_char:end_char])


def _utf8_length(text: str) -> int:
    # A lone surrogate fails the document later (invalid-utf8); here it only must not raise.
    return len(text.encode("utf-8", "surrogatepass"))
