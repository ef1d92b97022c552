"""LlamaIndex (extra ``llamaindex``): the toolkit's evidence as a retriever, and LlamaIndex's nodes ingested.

- :class:`GraphRagRetriever` is a LlamaIndex ``BaseRetriever`` over ``rag.retriever``. Each
  ``NodeWithScore`` is one evidence item: its score is the item's fused score relative to
  the best item's (1.0 for the first, 0..1, so ``SimilarityPostprocessor`` cut-offs work;
  ``fusedScore`` in the metadata is the fused score itself), and its
  ``TextNode`` has the chunk id as ``id_``, the item's text (exactly the stored bytes of its
  span) as ``text``, the document id as its source node, and the metadata keys of the
  LangChain adapter (``chunkId``, ``documentId``, ``sourceUri``, ``title`` when the document
  has one, ``startByte``, ``endByte``, ``score``, ``fusedScore``, ``routes``, ``pages``, ``grounding``, ``textOrigin``,
  ``omittedItems``, ``limitsReached``, ``kind`` ``"evidence"`` and ``citationChecked``
  False): passages to read and quote, not checked citations. Only ``title`` and
  ``sourceUri`` are shown to a model with the text, and no metadata is embedded. The
  node's ``start_char_idx`` and ``end_char_idx`` stay unset: spans are in bytes.
- Options and scope are the application's, fixed when the retriever is built.
- Async and blocking as in the LangChain adapter: ``aretrieve`` over a ``GraphRag``
  connected on the caller's loop, ``retrieve`` (and ``aretrieve``, from a worker thread)
  over its twin ``rag.sync()``; ``retrieve`` over an async ``GraphRag`` is refused
  (``invalid-option``).
- :func:`chunked_from_llamaindex` turns one source's nodes (in order) into a
  :class:`~graphrag_orm.ingestion.ChunkedDocument` for ``rag.ingestion.ingest_chunked``:
  each node's ``start_char_idx``/``end_char_idx``, when set, become a byte-span hint
  (characters of the text the parser split, converted to UTF-8 offsets), which the
  locator checks and never trusts; a node's ``header_path`` metadata
  (``MarkdownNodeParser``) becomes its context. :func:`ingest_llamaindex` does that for
  several sources with :func:`llamaindex_fingerprint` of the parser. A node the locator
  cannot place fails its document with ``position-not-recovered``, writing nothing of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)

from graphrag_orm.adapters._shared import (
    ByteOffsets,
    adapter_fingerprint,
    bound_rag,
    evidence_metadata,
    fixed_options,
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
    "GraphRagRetriever",
    "chunked_from_llamaindex",
    "ingest_llamaindex",
    "llamaindex_fingerprint",
    "to_nodes",
]

#: The metadata a model reads with a passage's text; the rest are ids and numbers for programs.
_SHOWN_TO_MODELS = frozenset({"title", "sourceUri"})


def to_nodes(evidence: Evidence) -> list[NodeWithScore]:
    """The evidence items as scored LlamaIndex nodes, best first (context items are left out)."""
    nodes: list[NodeWithScore] = []
    for item, score in zip(evidence.items, relative_scores(evidence), strict=True):
        metadata = evidence_metadata(item, evidence, score)
        node = TextNode(
            id_=item.chunk_id,
            text=item.text,
            metadata=metadata,
            excluded_embed_metadata_keys=sorted(metadata),
            excluded_llm_metadata_keys=sorted(set(metadata) - _SHOWN_TO_MODELS),
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=item.document_id)},
        )
        nodes.append(NodeWithScore(node=node, score=score))
    return nodes


class GraphRagRetriever(BaseRetriever):
    """``rag.retriever`` as a LlamaIndex retriever: evidence items as scored nodes.

    ``options`` default to the facade's retrieval options; ``scope`` is fixed for every
    query; a scope given both ways, differently, raises ``ConfigurationError("invalid-option")``,
    and so does a ``rag`` that is neither a ``GraphRag`` nor its twin. Retrieval errors are
    the toolkit's, with their codes. ``tenant`` binds every query to one tenant, as in
    the LangChain adapter; in a tenanted graph the retriever is built bound to one or not
    at all (``tenant-required``).
    """

    def __init__(
        self,
        rag: GraphRag | SyncGraphRag,
        *,
        options: RetrievalOptions | None = None,
        scope: Scope | None = None,
        tenant: Tenant | str | None = None,
        **base: Any,
    ) -> None:
        if not isinstance(rag, GraphRag | SyncGraphRag):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "rag must be a GraphRag or its twin rag.sync()")
        rag = bound_rag(rag, tenant, type(self).__name__)
        self.rag = rag
        self.options = fixed_options(options or retrieval_options_of(rag), scope)
        super().__init__(**base)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not isinstance(self.rag, SyncGraphRag):
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                "retrieve() needs the blocking twin: build the retriever with rag.sync() (connected with "
                "rag.sync().connect()), or call aretrieve() on the loop the GraphRag was connected on",
            )
        return to_nodes(self.rag.retriever.retrieve(query_bundle.query_str, self.options))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if isinstance(self.rag, SyncGraphRag):
            # The twin's calls block until its own loop has run them; keep this loop free meanwhile.
            evidence = await asyncio.to_thread(self.rag.retriever.retrieve, query_bundle.query_str, self.options)
        else:
            evidence = await self.rag.retriever.retrieve(query_bundle.query_str, self.options)
        return to_nodes(evidence)


def llamaindex_fingerprint(parser: object) -> str:
    """The chunker fingerprint of a LlamaIndex node parser: its type, library version, settings, adapter version."""
    return adapter_fingerprint("llamaindex", parser)


def chunked_from_llamaindex(source: Source, nodes: Sequence[BaseNode], *, text: str | None = None) -> ChunkedDocument:
    """One source and the nodes a LlamaIndex parser cut it into, in order, ready for ``ingest_chunked``.

    Each node's text is ``get_content()`` without metadata. ``text`` is the text the
    parser split (the LlamaIndex ``Document``'s text; a text source's own text by
    default): with it, a node's ``start_char_idx``/``end_char_idx`` become a byte-span
    hint. A ``header_path`` metadata value (``/Guide/Install/``) becomes the context
    ``Guide/Install``. Raises ``ConfigurationError("invalid-source")`` for an item that
    is not a node (naming its index, never its text).
    """
    whole = text if text is not None else source.text
    offsets = ByteOffsets(whole) if whole is not None else None
    items: list[ChunkText] = []
    for index, node in enumerate(nodes):
        if not isinstance(node, BaseNode):
            raise ConfigurationError(ErrorCode.INVALID_SOURCE, f"node {index} is a {type(node).__name__}, not a node")
        content = node.get_content(metadata_mode=MetadataMode.NONE)
        path = node.metadata.get("header_path")
        context = (path.strip("/") or None) if isinstance(path, str) else None
        span = None
        if offsets is not None and isinstance(node, TextNode):
            start, end = node.start_char_idx, node.end_char_idx
            if isinstance(start, int) and isinstance(end, int):
                span = offsets.span(start, end)
        if span is None:
            items.append(ChunkText(content, context=context))
        else:
            items.append(ChunkText(content, context=context, start_byte=span[0], end_byte=span[1]))
    return ChunkedDocument.create(source, items)


async def ingest_llamaindex(
    rag: GraphRag,
    documents: Iterable[tuple[Source, Sequence[BaseNode]]],
    parser: object,
    *,
    tenant: Tenant | str | None = None,
) -> IngestionReceipt:
    """Ingest each source with the nodes ``parser`` cut it into, under the parser's fingerprint.

    ``documents`` pairs each source with its nodes, in order; the receipt is
    ``ingest_chunked``'s (a document with a node that cannot be placed fails with
    ``position-not-recovered`` and nothing of it is written).
    """
    chunked = [chunked_from_llamaindex(source, nodes) for source, nodes in documents]
    bound = bound_rag(rag, tenant, "ingest_llamaindex")
    assert isinstance(bound, GraphRag)
    return await bound.ingestion.ingest_chunked(chunked, llamaindex_fingerprint(parser))
