"""Loaders turn sources into UTF-8 documents: text, Markdown and (with the ``pdf`` extra) PDF."""

from __future__ import annotations

from graphrag_orm.loaders.base import DocumentLoader, LoadedDocument
from graphrag_orm.loaders.pdf import PdfLoader
from graphrag_orm.loaders.registry import LoaderRegistry
from graphrag_orm.loaders.text import TextLoader

__all__ = ["DocumentLoader", "LoadedDocument", "LoaderRegistry", "PdfLoader", "TextLoader"]
