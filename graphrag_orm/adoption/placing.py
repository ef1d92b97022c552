"""Where an adopted document's chunks sit: byte-exact in its source file, or only in themselves.

:func:`ground` takes one document's stored ``path`` and its chunks' texts in index
order, and the source file given for it, if any. The file is loaded as ingestion loads
it (:class:`~graphrag_orm.loaders.LoaderRegistry`) and the chunks are placed in its
UTF-8 bytes by the text locator (:func:`graphrag_orm.placement.place`) with
normalisation off, and only a byte-exact placement counts: adoption never rewrites a
chunk's text, so a chunk's text must be exactly its span. When every chunk is placed
so, the document is source-grounded: real byte spans, the file's content hash and length.

Otherwise (no file, a file that does not load, a chunk not found as it is, a blank
chunk) every chunk of the document is chunk-grounded: its span is ``[0, UTF-8 length)``
of its own text, and the document's content hash and length are those of its chunks'
texts joined in order, what the graph holds of it. Never partly placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_orm.adoption.identity import adopted_uri, document_id
from graphrag_orm.errors import GraphRagError
from graphrag_orm.evidence import Grounding
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.placement import PlacementMethod, place
from graphrag_orm.sources import Source, content_hash, media_type_for

__all__ = ["GroundedDocument", "ground"]

_PLAIN = "text/plain"


@dataclass(frozen=True)
class GroundedDocument:
    """What adoption writes on one document and the spans of its chunks, in index order."""

    document_id: str
    source_uri: str
    media_type: str
    content_hash: str
    length_bytes: int
    grounding: Grounding
    spans: tuple[tuple[int, int], ...]
    #: A source file was given for it (placed or not).
    had_source: bool


async def ground(
    path: str, texts: Sequence[str], source: Source | None, loaders: LoaderRegistry, *, tenant: str | None = None
) -> GroundedDocument:
    """The document's keys and its chunks' spans (see the module's docstring); reads only the file.
    In a tenanted graph the id is qualified by ``tenant`` (a validated tenant value), as ingestion's."""
    uri = source.source_uri if source is not None else adopted_uri(path)
    media_type = source.media_type if source is not None else (media_type_for(path) or _PLAIN)
    if source is not None:
        spans = await _placed(source, texts, loaders)
        if spans is not None:
            utf8, found = spans
            return GroundedDocument(
                document_id(uri, tenant), uri, media_type, content_hash(utf8), len(utf8), Grounding.SOURCE, found, True
            )
    joined = "".join(texts).encode("utf-8")
    own = tuple((0, len(text.encode("utf-8"))) for text in texts)
    return GroundedDocument(
        document_id(uri, tenant),
        uri,
        media_type,
        content_hash(joined),
        len(joined),
        Grounding.CHUNK,
        own,
        source is not None,
    )


async def _placed(
    source: Source, texts: Sequence[str], loaders: LoaderRegistry
) -> tuple[bytes, tuple[tuple[int, int], ...]] | None:
    try:
        loaded = await loaders.load(source)
        placement = place(loaded.utf8, list(texts), normalised=False, max_chunks=max(len(texts), 1))
    except GraphRagError:  # unreadable, unsupported, or a chunk not in the file as it is
        return None
    if any(chunk.method is not PlacementMethod.EXACT for chunk in placement.chunks):
        return None
    return loaded.utf8, tuple(placement.spans)
