"""Loaders turn sources into UTF-8 documents: text, Markdown and (with the ``pdf`` extra) PDF."""

from __future__ import annotations

from .base import DocumentLoader, LoadedDocument
from .pdf import PdfLoader
from .registry import LoaderRegistry
from .text import TextLoader

__all__ = ["DocumentLoader", "LoadedDocument", "LoaderRegistry", "PdfLoader", "TextLoader"]
