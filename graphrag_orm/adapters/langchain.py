"""LangChain (extra ``langchain``): the toolkit's evidence as a retriever, and LangChain's chunks ingested.

- :class:`GraphRagRetriever` is a LangChain ``BaseRetriever`` over ``rag.retriever``. Each
  ``Document`` is one evidence item: ``page_content`` is its text, exactly the stored bytes
  of its span, ``id`` its chunk id, and ``metadata`` carries ``chunkId``, ``documentId``,
  ``sourceUri``, ``title`` (only when the document has one), ``startByte``, ``endByte``,
  ``score`` (the fused score relative to the best item's: 1.0 for the first, 0..1, to
  threshold), ``fusedScore``, ``routes``, ``pages``,
  ``grounding``, ``textOrigin``, ``omittedItems`` and ``limitsReached``, with ``kind``
  ``"evidence"`` and ``citationChecked`` False: these are passages to read and quote, not
  checked citations (``rag.answers`` checks citations). Context items (neighbours, a
  Cypher expansion) are not evidence and are not returned.
- The options and the scope are the application's, fixed when the retriever is built; a
  query never changes them (``invoke`` takes no options).
- Async and blocking: give the retriever the object you connected. A ``GraphRag``
  connected with ``await rag.connect()`` serves ``ainvoke`` on that event loop; its
  blocking twin ``rag.sync()`` (connected with ``rag.sync().connect()``) serves ``invoke``,
  and ``ainvoke`` too, from a worker thread. ``invoke`` over an async ``GraphRag`` is refused
  (``invalid-option``): the driver lives on the loop it was opened on.
- :func:`chunked_from_langchain` turns a splitter's chunks of one source (``Document`` or
  ``str``) into a :class:`~graphrag_orm.ingestion.ChunkedDocument` for
  ``rag.ingestion.ingest_chunked``: each chunk keeps LangChain's text, a header splitter's
  heading metadata becomes its ``context`` (the heading path, ``A > B``), and a
  ``start_index`` (``add_start_index=True``) becomes a byte-span hint, which the locator
  checks and never trusts. :func:`ingest_langchain` does that for several sources and
  ingests them with :func:`langchain_fingerprint` of the splitter (its type, its
  library's version, its settings and the adapter's version), so another splitter, or other settings, make
  other chunk ids. The stored chunks are the document's own bytes wherever LangChain
  changed the text (a stripped heading, a blank line joined): the receipt counts how each
  chunk was placed, and a chunk that cannot be placed fails its document with
  ``position-not-recovered``, writing nothing of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import PrivateAttr, ValidationError

from graphrag_orm.adapters._shared import (
    ByteOffsets,
    adapter_fingerprint,
    bound_rag,
    evidence_metadata,
    fixed_options,
    invalid_fields,
    relative_scores,
    retrieval_options_of,
)
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import Evidence
from graphrag_orm.facade import GraphRag
from graphrag_orm.ingestion import ChunkedDocument, IngestionReceipt
from graphrag_orm.placement import ChunkText
from graphrag_orm.retrieval import RetrievalOptions, Scope
from graphrag_orm.sources import Source
from graphrag_orm.sync import SyncGraphRag
from graphrag_orm.tenancy import Tenant

__all__ = [
    "CONTEXT_SEPARATOR",
    "GraphRagRetriever",
    "chunked_from_langchain",
    "header_keys_of",
    "ingest_langchain",
    "langchain_fingerprint",
    "to_documents",
]

#: Joins a header splitter's headings into a chunk's context: ``Guide > Install``.
CONTEXT_SEPARATOR = " > "


def to_documents(evidence: Evidence) -> list[Document]:
    """The evidence items as LangChain documents, best first (context items are left out)."""
    return [
        Document(id=item.chunk_id, page_content=item.text, metadata=evidence_metadata(item, evidence, score))
        for item, score in zip(evidence.items, relative_scores(evidence), strict=True)
    ]


class GraphRagRetriever(BaseRetriever):
    """``rag.retriever`` as a LangChain retriever: evidence items as documents, with ids, spans and scores.

    ``options`` default to the facade's retrieval options; ``scope`` (a documents,
    sections, metadata or Cypher scope) is fixed for every query. A scope given both in
    ``options`` and as ``scope``, differently, raises ``ConfigurationError("invalid-option")``.
    Retrieval errors are the toolkit's (``QuestionRefused``, ``ScopeError``,
    ``RetrievalFailed``), with their codes. ``tenant`` binds every query to one tenant
    (``rag.for_tenant(tenant)``, a blocking twin's too);
    in a tenanted graph the retriever is built bound to one or not at all (``tenant-required``).
    """

    rag: GraphRag | SyncGraphRag
    options: RetrievalOptions | None = None
    scope: Scope | None = None
    tenant: Tenant | str | None = None
    _fixed: RetrievalOptions = PrivateAttr()

    def __init__(self, **fields: Any) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as error:
            raise invalid_fields(type(self).__name__, error) from None
        self.rag = bound_rag(self.rag, self.tenant, type(self).__name__)
        # After validation, so the refusal keeps its own code instead of becoming pydantic's.
        self._fixed = fixed_options(self.options or retrieval_options_of(self.rag), self.scope)

    @property
    def retrieval_options(self) -> RetrievalOptions:
        """The options every query runs with, the scope included."""
        return self._fixed

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if not isinstance(self.rag, SyncGraphRag):
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                "invoke() needs the blocking twin: build the retriever with rag.sync() (connected with "
                "rag.sync().connect()), or call ainvoke() on the loop the GraphRag was connected on",
            )
        return to_documents(self.rag.retriever.retrieve(query, self._fixed))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if isinstance(self.rag, SyncGraphRag):
            # The twin's calls block until its own loop has run them; keep this loop free meanwhile.
            evidence = await asyncio.to_thread(self.rag.retriever.retrieve, query, self._fixed)
        else:
            evidence = await self.rag.retriever.retrieve(query, self._fixed)
        return to_documents(evidence)


def langchain_fingerprint(splitter: object) -> str:
    """The chunker fingerprint of a LangChain splitter (see :func:`ingest_langchain`)."""
    return adapter_fingerprint("langchain", splitter)


def header_keys_of(splitter: object) -> tuple[str, ...]:
    """The metadata keys a Markdown header splitter writes, outermost heading first; () for other splitters.

    Reads ``headers_to_split_on`` (``MarkdownHeaderTextSplitter``: ``[("#", "Header 1"), ...]``)
    or ``splittable_headers`` (``ExperimentalMarkdownSyntaxTextSplitter``: ``{"#": "Header 1"}``).
    """
    pairs: Iterable[Any] = getattr(splitter, "headers_to_split_on", None) or ()
    headers = getattr(splitter, "splittable_headers", None)
    if isinstance(headers, Mapping):
        pairs = headers.items()
    # A custom pattern (``{"**": 1}``) has its level given; a ``#`` heading's level is its count.
    custom = getattr(splitter, "custom_header_patterns", None) or {}
    levels = [
        (custom.get(sep) if isinstance(custom.get(sep), int) else str(sep).count("#") or len(str(sep)), index, name)
        for index, (sep, name) in enumerate(pairs)
        if isinstance(name, str)
    ]
    return tuple(dict.fromkeys(name for _, _, name in sorted(levels)))


def chunked_from_langchain(
    source: Source,
    chunks: Sequence[Document | str],
    *,
    header_keys: Sequence[str] = (),
    text: str | None = None,
) -> ChunkedDocument:
    """One source and the chunks a LangChain splitter cut it into, in order, ready for ``ingest_chunked``.

    ``header_keys`` name the heading metadata of a header splitter, outermost first
    (:func:`header_keys_of` reads them from the splitter); the headings found join into
    the chunk's ``context`` with :data:`CONTEXT_SEPARATOR`. ``text`` is the text the
    splitter split (a text source's own text by default): with it, a chunk's
    ``start_index`` metadata becomes a byte-span hint. Raises
    ``ConfigurationError("invalid-source")`` for a chunk that is neither a ``Document``
    nor a ``str`` (naming its index, never its text).
    """
    whole = text if text is not None else source.text
    offsets = ByteOffsets(whole) if whole is not None else None
    items: list[ChunkText | str] = []
    for index, chunk in enumerate(chunks):
        if isinstance(chunk, str):
            items.append(chunk)
            continue
        if not isinstance(chunk, Document):
            raise ConfigurationError(
                ErrorCode.INVALID_SOURCE, f"chunk {index} is a {type(chunk).__name__}, not a Document or str"
            )
        headings = [chunk.metadata[key] for key in header_keys if isinstance(chunk.metadata.get(key), str)]
        context = CONTEXT_SEPARATOR.join(headings) or None
        span = None
        start = chunk.metadata.get("start_index")
        if offsets is not None and isinstance(start, int) and not isinstance(start, bool) and start >= 0:
            span = offsets.span(start, start + len(chunk.page_content))
        if span is None:
            items.append(ChunkText(chunk.page_content, context=context))
        else:
            items.append(ChunkText(chunk.page_content, context=context, start_byte=span[0], end_byte=span[1]))
    return ChunkedDocument.create(source, items)


async def ingest_langchain(
    rag: GraphRag,
    documents: Iterable[tuple[Source, Sequence[Document | str]]],
    splitter: object,
    *,
    tenant: Tenant | str | None = None,
) -> IngestionReceipt:
    """Ingest each source with the chunks ``splitter`` cut it into, under the splitter's fingerprint.

    ``documents`` pairs each source with its chunks, in order. The receipt is
    ``ingest_chunked``'s: one outcome per document, with how its chunks were placed; a
    document with a chunk that cannot be placed fails (``position-not-recovered``) and
    nothing of it is written, while the other documents are.
    """
    keys = header_keys_of(splitter)
    chunked = [chunked_from_langchain(source, chunks, header_keys=keys) for source, chunks in documents]
    bound = bound_rag(rag, tenant, "ingest_langchain")
    assert isinstance(bound, GraphRag)
    return await bound.ingestion.ingest_chunked(chunked, langchain_fingerprint(splitter))
