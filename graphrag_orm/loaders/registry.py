"""Which loader takes which source: a registry keyed by media type."""

from __future__ import annotations

from collections.abc import Mapping

from graphrag_orm.loaders.base import DocumentLoader, LoadedDocument, unsupported
from graphrag_orm.loaders.pdf import PdfLoader
from graphrag_orm.loaders.text import TextLoader
from graphrag_orm.sources import Source

__all__ = ["LoaderRegistry"]


class LoaderRegistry:
    """Maps a media type to the loader for it; itself a :class:`DocumentLoader`.

    A source is loaded by the loader registered for its media type, if that loader's
    ``can_load`` accepts it; otherwise ``load`` raises ``LoadError`` with code
    ``unsupported-media-type``. The registry never guesses a media type from content.
    """

    def __init__(self, loaders: Mapping[str, DocumentLoader] | None = None) -> None:
        self._loaders: dict[str, DocumentLoader] = {}
        for media_type, loader in (loaders or {}).items():
            self.register(media_type, loader)

    @classmethod
    def default(
        cls,
        max_document_bytes: int = 16 << 20,
        *,
        max_pdf_file_bytes: int = 64 << 20,
        max_pdf_pages: int = 5_000,
    ) -> LoaderRegistry:
        """``text/plain`` and ``text/markdown`` (:class:`TextLoader`) and ``application/pdf``
        (:class:`PdfLoader`, which refuses with ``unsupported-media-type`` when the ``pdf``
        extra is not installed). Bounds as the loaders state them.
        """
        text = TextLoader(max_document_bytes=max_document_bytes)
        pdf = PdfLoader(
            max_file_bytes=max_pdf_file_bytes, max_pages=max_pdf_pages, max_document_bytes=max_document_bytes
        )
        return cls({"text/plain": text, "text/markdown": text, "application/pdf": pdf})

    def register(self, media_type: str, loader: DocumentLoader) -> None:
        """Use ``loader`` for ``media_type`` (lower-cased), replacing any loader before it."""
        self._loaders[media_type.strip().lower()] = loader

    @property
    def media_types(self) -> tuple[str, ...]:
        """The registered media types, sorted."""
        return tuple(sorted(self._loaders))

    def loader_for(self, source: Source) -> DocumentLoader | None:
        """The loader that would load ``source``, or None."""
        loader = self._loaders.get(source.media_type)
        return loader if loader is not None and loader.can_load(source) else None

    def can_load(self, source: Source) -> bool:
        """True when a registered loader takes ``source``."""
        return self.loader_for(source) is not None

    async def load(self, source: Source) -> LoadedDocument:
        """The loaded document; ``LoadError`` from the loader, or ``unsupported-media-type``."""
        loader = self.loader_for(source)
        if loader is None:
            raise unsupported(source, f"no loader is registered for it (loaders: {', '.join(self.media_types)})")
        return await loader.load(source)
