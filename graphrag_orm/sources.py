"""Sources: what to ingest, and the identity every document gets from its URI.

A :class:`Source` names one document: a file on disk or a text held in memory, its
normalised source URI, its media type and optional :class:`SourceMetadata`. Nothing
here reads a file; loading is :mod:`graphrag_orm.loaders`' job.

Identity (the reference design, section 5 and its amendment of section 13):

- a file's URI is its absolute ``file:`` URI, unless the caller names it with ``uri``
  (or ``base_uri`` for a folder), such as the address it is published at;
- any other URI keeps its text except that the scheme and host are lower-cased and a
  default port (``http`` 80, ``https`` 443, ``ws`` 80, ``wss`` 443, ``ftp`` 21) or an
  empty one is removed;
- a text source's URI is ``text:`` followed by its id, as given;
- the document id is the SHA-256 (lower-case hex) of that URI, and the content hash is
  the SHA-256 of the loaded UTF-8 bytes; in a tenanted graph (docs/tenancy.md) the id is
  the SHA-256 of the tenant, a newline and the URI (:meth:`Source.in_tenant`), so the same
  URI in two tenants is two documents.

Bad input raises :class:`~graphrag_orm.errors.ConfigurationError` with code
``invalid-source``; a file that is missing or unreadable is *not* bad input here, it
fails later, when loaded, with the document error code ``read-failed``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import Field, PrivateAttr, ValidationError, computed_field, field_validator, model_validator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.values import Value

__all__ = [
    "INVALID_SOURCE",
    "MAX_TITLE_CHARS",
    "MEDIA_TYPES",
    "Source",
    "SourceMetadata",
    "Sources",
    "clean_title",
    "content_hash",
    "document_id",
    "media_type_for",
    "normalize_uri",
]

INVALID_SOURCE = ErrorCode.INVALID_SOURCE
"""The ``ConfigurationError`` code for a source that cannot be named or found."""

MEDIA_TYPES: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".pdf": "application/pdf",
}
"""File name suffixes (lower-case) the toolkit maps to a media type."""

UNKNOWN_MEDIA_TYPE = "application/octet-stream"
"""The media type of a file whose suffix is not in :data:`MEDIA_TYPES`; no loader takes it."""

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+\-]*/[a-z0-9][a-z0-9!#$&^_.+\-]*")
# Whitespace and control characters are never part of a URI; refusing them keeps a
# URI from meaning two different documents depending on who trims it.
_NOT_IN_URI = re.compile(r"[\x00-\x20\x7f-\x9f\s]")


MAX_TITLE_CHARS = 500
"""The longest title kept, in characters; a longer one is cut and ends with ``…``."""

# Control characters (C0 but tab, DEL, C1) and lone surrogates carry no text; line breaks
# (str.splitlines' set: LF, CR, VT, FF, FS, GS, RS, NEL, LS, PS) become spaces.
_TITLE_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]")


def clean_title(title: str | None) -> str | None:
    """A title on one line: line breaks become spaces, control characters go, at most 500 characters.

    Each line is stripped of spaces and tabs and the non-empty lines are joined by one
    space; control characters other than tab (and lone surrogates) are removed; a title
    longer than :data:`MAX_TITLE_CHARS` is cut to 499 characters and ``…``. An empty
    result is None. Cleaning a clean title changes nothing. Every title the toolkit stores
    or returns (a loader's, the source metadata's, an evidence item's) passes through it.
    """
    if title is None:
        return None
    lines = (_TITLE_CONTROLS.sub("", line).strip(" \t") for line in title.splitlines())
    text = " ".join(line for line in lines if line)
    if len(text) > MAX_TITLE_CHARS:
        text = text[: MAX_TITLE_CHARS - 1].rstrip(" \t") + "…"
    return text or None


def _invalid(message: str) -> ConfigurationError:
    return ConfigurationError(INVALID_SOURCE, message)


def normalize_uri(uri: str) -> str:
    """The URI with scheme and host lower-cased and a default or empty port removed.

    Nothing else changes: user information, path, query and fragment are kept as
    given, character for character (no dot-segment removal, no percent-encoding
    changes). A ``file:`` or ``text:`` URI is treated like any other.

    Raises ``ConfigurationError("invalid-source")`` for an empty or relative URI (no
    scheme), whitespace or control characters, or a port that is not a number.
    """
    if not uri:
        raise _invalid("a source URI must not be empty")
    if _NOT_IN_URI.search(uri):
        raise _invalid(f"a source URI must not contain whitespace or control characters: {uri!r}")
    colon = uri.find(":")
    scheme = uri[:colon] if colon > 0 else ""
    if not _SCHEME.fullmatch(scheme):
        raise _invalid(f"a source URI must be absolute, with a scheme such as https: or file:: {uri!r}")
    scheme = scheme.lower()
    rest = uri[colon + 1 :]
    if not rest.startswith("//"):
        return f"{scheme}:{rest}"
    after = rest[2:]
    cut = len(after)
    for stop in "/?#":
        found = after.find(stop)
        if found != -1:
            cut = min(cut, found)
    authority, remainder = after[:cut], after[cut:]
    userinfo, at, hostport = authority.rpartition("@")
    host, port = _split_host_port(hostport, uri)
    if port is not None and port != "":
        if not port.isascii() or not port.isdigit():
            raise _invalid(f"a source URI's port must be a number: {uri!r}")
        if int(port) == _DEFAULT_PORTS.get(scheme, -1):
            port = None
    host = host.lower()
    hostport = host if not port else f"{host}:{port}"
    return f"{scheme}://{userinfo}{at}{hostport}{remainder}"


def _split_host_port(hostport: str, uri: str) -> tuple[str, str | None]:
    """Host and port (None when absent) of an authority's host part; IPv6 in brackets."""
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            raise _invalid(f"a source URI has an unclosed IPv6 address: {uri!r}")
        tail = hostport[close + 1 :]
        if tail and not tail.startswith(":"):
            raise _invalid(f"a source URI has text after its IPv6 address: {uri!r}")
        return hostport[: close + 1], (tail[1:] if tail else None)
    host, colon, port = hostport.partition(":")
    return host, (port if colon else None)


def document_id(source_uri: str, tenant: str | None = None) -> str:
    """SHA-256 (lower-case hex) of the UTF-8 of an already normalised source URI.

    With ``tenant`` (a validated tenant value), of the tenant, a newline and the URI: neither
    holds a newline, so no two (tenant, URI) pairs share an id.
    """
    named = source_uri if tenant is None else f"{tenant}\n{source_uri}"
    return hashlib.sha256(named.encode("utf-8")).hexdigest()


def content_hash(utf8: bytes) -> str:
    """SHA-256 (lower-case hex) of a document's loaded UTF-8 bytes."""
    return hashlib.sha256(utf8).hexdigest()


def media_type_for(path: str | os.PathLike[str]) -> str | None:
    """The media type of a file name by its suffix (case-insensitive), or None if unknown.

    ``.md`` and ``.markdown`` are ``text/markdown``, ``.txt`` is ``text/plain`` and
    ``.pdf`` is ``application/pdf``. The file is never opened.
    """
    return MEDIA_TYPES.get(Path(path).suffix.lower())


def _check_media_type(media_type: str) -> str:
    normalised = media_type.strip().lower()
    if not _MEDIA_TYPE.fullmatch(normalised):
        raise _invalid(f"a media type must look like type/subtype, without parameters: {media_type!r}")
    return normalised


def _file_uri(path: Path) -> str:
    # abspath normalises ".." without resolving symbolic links, so a file keeps the
    # name the caller used for it.
    return Path(os.path.abspath(path)).as_uri()


class SourceMetadata(Value):
    """What the application knows about a source beyond its bytes; every field optional.

    ``published`` is kept exactly as the application gives it (no date parsing).
    ``text_origin`` names where derived text came from, such as ``"ocr: Tesseract 5.3"``;
    None means the text is the source's own. A ``title`` here wins over the title a
    loader finds in the document; it is cleaned and bounded by :func:`clean_title`.
    """

    title: str | None = None
    published: str | None = None
    publisher: str | None = None
    url: str | None = None
    text_origin: str | None = None

    @field_validator("title")
    @classmethod
    def _clean_title(cls, title: str | None) -> str | None:
        return clean_title(title)


_COMPUTED_KEYS = ("document_id", "documentId")


class Source(Value):
    """One document to load: a file (``path``) or an in-memory text (``text``), never both.

    ``source_uri`` is normalised (see :func:`normalize_uri`); ``document_id`` is its
    SHA-256. Build sources with :class:`Sources` rather than by hand: the constructor
    checks the shape but does not derive the URI.
    """

    source_uri: str
    media_type: str
    path: Path | None = None
    text: str | None = Field(default=None, repr=False)
    metadata: SourceMetadata = SourceMetadata()
    #: The tenant whose document this is (a tenanted ingestion sets it: :meth:`in_tenant`).
    _tenant: str | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        # A dumped source carries its computed document id; accept it back only when it
        # matches, so JSON round-trips without letting a stale id in.
        if isinstance(data, dict) and any(key in data for key in _COMPUTED_KEYS):
            data = dict(data)
            given = [data.pop(key) for key in _COMPUTED_KEYS if key in data]
            uri = data.get("source_uri", data.get("sourceUri"))
            if isinstance(uri, str) and any(value != document_id(uri) for value in given):
                raise ValueError("documentId does not match the source URI")
        return data

    @model_validator(mode="after")
    def _one_origin(self) -> Source:
        if (self.path is None) == (self.text is None):
            raise ValueError("a source has exactly one of path and text")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def document_id(self) -> str:
        """SHA-256 (lower-case hex) of ``source_uri`` (and of the tenant, in a tenanted graph)."""
        return document_id(self.source_uri, self._tenant)

    def in_tenant(self, tenant: str) -> Source:
        """A copy that is ``tenant``'s document: its id is qualified by the tenant (``tenant``
        is a validated :class:`~graphrag_orm.tenancy.Tenant` value; the ingestion sets it)."""
        copy = self.model_copy()
        copy._tenant = tenant
        return copy

    def with_metadata(self, metadata: SourceMetadata | None = None, **fields: str | None) -> Source:
        """A copy with ``metadata`` replaced (when given), then the named fields changed.

        ``source.with_metadata(title="Guide", text_origin=None)`` changes two fields and
        keeps the others. An unknown field name raises ``ConfigurationError("invalid-source")``.
        """
        base = metadata if metadata is not None else self.metadata
        try:
            merged = SourceMetadata.model_validate({**base.model_dump(), **fields})
        except ValidationError as error:
            raise _invalid(f"invalid source metadata: {error}") from None
        return self.model_copy(update={"metadata": merged})


class Sources:
    """Factories for :class:`Source`; they read directory listings but never file contents."""

    @staticmethod
    def file(
        path: str | os.PathLike[str],
        uri: str | None = None,
        metadata: SourceMetadata | None = None,
        *,
        media_type: str | None = None,
    ) -> Source:
        """A file source, named by ``uri`` (normalised) or else by its absolute ``file:`` URI.

        The media type comes from the suffix (:func:`media_type_for`) unless given;
        an unknown suffix gives ``application/octet-stream``, which no loader takes
        (the document then fails with ``unsupported-media-type``). The file need not
        exist yet; a missing file fails when loaded, with ``read-failed``.
        """
        file_path = Path(os.path.abspath(path))
        source_uri = normalize_uri(uri) if uri is not None else _file_uri(file_path)
        chosen = (
            _check_media_type(media_type)
            if media_type is not None
            else (media_type_for(file_path) or UNKNOWN_MEDIA_TYPE)
        )
        return Source(
            source_uri=source_uri,
            media_type=chosen,
            path=file_path,
            metadata=metadata or SourceMetadata(),
        )

    @staticmethod
    def folder(
        path: str | os.PathLike[str],
        pattern: str = "*.md",
        recursive: bool = True,
        base_uri: str | None = None,
    ) -> list[Source]:
        """The files under ``path`` whose *name* matches ``pattern``, sorted by relative POSIX path.

        ``pattern`` is a shell-style pattern on the file name only (``*.md``,
        ``report-??.txt``); a pattern with a path separator is refused. With
        ``recursive`` the search descends into subfolders (symbolic links to folders are
        not followed, so a link cycle cannot loop). The order is stable: the sort key is
        the path relative to ``path`` with ``/`` separators.

        With ``base_uri`` (absolute, no query or fragment) each file's URI is the base,
        with a ``/`` appended when missing, joined with the relative path, each segment
        percent-encoded (UTF-8). Without it, each file is its absolute ``file:`` URI.

        Raises ``ConfigurationError("invalid-source")`` when the folder does not exist
        or is not a folder, the pattern is empty or has a separator, or ``base_uri`` is
        not an absolute URI.
        """
        root = Path(os.path.abspath(path))
        if not root.is_dir():
            raise _invalid(f"the folder does not exist or is not a folder: {root}")
        if not pattern or "/" in pattern or os.sep in pattern:
            raise _invalid(f"a folder pattern matches file names and has no separator: {pattern!r}")
        base = _folder_base(base_uri) if base_uri is not None else None

        relatives: list[str] = []
        for directory, subdirectories, files in os.walk(root, followlinks=False):
            if not recursive:
                subdirectories.clear()
            relative_dir = Path(directory).relative_to(root).as_posix()
            for name in files:
                if fnmatch.fnmatch(name, pattern):
                    relatives.append(name if relative_dir == "." else f"{relative_dir}/{name}")
        relatives.sort()

        sources: list[Source] = []
        for relative in relatives:
            uri = None
            if base is not None:
                uri = base + "/".join(quote(segment, safe="") for segment in relative.split("/"))
            sources.append(Sources.file(root / relative, uri=uri))
        return sources

    @staticmethod
    def text(
        id: str,  # the reference's parameter name, kept for the public API
        text: str,
        media_type: str = "text/plain",
        metadata: SourceMetadata | None = None,
    ) -> Source:
        """An in-memory text source whose URI is ``text:<id>`` (the id as given, not encoded).

        The id must have at least one non-whitespace character and no control
        characters; the media type must be ``type/subtype`` (it is lower-cased). The
        text is encoded when loaded: a string that is not valid Unicode (a lone
        surrogate) fails then with ``invalid-utf8``.
        """
        if not id or not id.strip():
            raise _invalid("a text source needs a non-empty id")
        if re.search(r"[\x00-\x1f\x7f]", id):
            raise _invalid(f"a text source's id must not contain control characters: {id!r}")
        return Source(
            source_uri=f"text:{id}",
            media_type=_check_media_type(media_type),
            text=text,
            metadata=metadata or SourceMetadata(),
        )


def _folder_base(base_uri: str) -> str:
    base = normalize_uri(base_uri)
    if "?" in base or "#" in base:
        raise _invalid(f"a base URI must not have a query or fragment: {base_uri!r}")
    return base if base.endswith("/") else base + "/"
