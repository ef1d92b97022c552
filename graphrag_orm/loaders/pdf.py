"""PDF: the text layer, page by page, with the offset where each page starts.

Needs the ``pdf`` extra (``pip install "graphrag-orm[pdf]"``, which brings pypdf).
The document a PDF yields is its extracted text, so chunks and citations are exact
spans of that text, not of the file's bytes; the content hash is the hash of the
text, so a PDF re-saved with the same text is unchanged.
"""

from __future__ import annotations

import asyncio
import functools
import io
import math
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import LoadError
from graphrag_orm.loaders.base import MAX_DOCUMENT_BYTES_BOUNDS, LoadedDocument, check_bound, read_bounded, unsupported
from graphrag_orm.sources import Source, clean_title

if TYPE_CHECKING:
    from pypdf import PageObject, PdfReader

__all__ = ["PdfLoader"]

MEDIA_TYPE = "application/pdf"
MAX_FILE_BYTES_BOUNDS = (1 << 10, 1 << 30)
"""Inclusive bounds of ``max_file_bytes``: 1 KiB to 1 GiB."""
MAX_PAGES_BOUNDS = (1, 100_000)
"""Inclusive bounds of ``max_pages``."""
MAX_PARSE_SECONDS_BOUNDS = (1, 3_600)
"""Inclusive bounds of ``max_parse_seconds``."""
MAX_PAGE_CONTENT_BYTES_BOUNDS = (64 << 10, 64 << 20)
"""Inclusive bounds of ``max_page_content_bytes``: 64 KiB to 64 MiB."""
# A page tree has fewer inner nodes than pages when each has two kids or more; this many
# nodes per allowed page (and a few more) is generous, and bounds the walk of a hostile tree.
_TREE_NODES_PER_PAGE = 2
_TREE_NODES_SLACK = 128
_TREE_DEPTH = 100

# A line further below the previous one than this many font heights starts a new
# paragraph: single-spaced text sits about 1.2 heights apart, paragraphs further.
_PARAGRAPH_GAP = 1.5
# Control characters other than tab and line feed carry no text (pypdf emits some
# for unmapped glyphs); lone surrogates cannot be encoded as UTF-8.
_UNWANTED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def _pypdf() -> Any:
    try:
        import pypdf
    except ImportError:
        return None
    return pypdf


class PdfLoader:
    """Loads ``application/pdf`` files: pypdf's text layer, in its reading order.

    Each page's text is split into lines as pypdf extracts them (content-stream
    order); a line starts a new paragraph when it sits more than 1.5 font heights
    below the previous one, above it (a new column or block), or after an empty
    line. Lines of a paragraph are joined by ``\\n``, paragraphs and pages by a blank
    line (``\\n\\n``). Trailing spaces of a line, control characters other than tab,
    and empty lines are dropped.

    ``page_starts[i]`` is the UTF-8 offset where page ``i + 1``'s text starts; the
    blank line between two pages belongs to the earlier page, and a page without
    text starts where the next page's text starts (or at the end), so it spans no
    bytes. The title is the source metadata's title, else the PDF's ``/Title``, else None.

    Refusals (:class:`~graphrag_orm.errors.LoadError` codes):

    - ``document-too-large``: the file is over ``max_file_bytes`` (1 KiB to 1 GiB,
      default 64 MiB; checked with ``stat`` before reading), it has more than
      ``max_pages`` pages (1 to 100,000, default 5,000; counted in the page tree before
      any page is built, and the walk stops past the bound), a page's content streams
      (and the form XObjects it names) decode to more than ``max_page_content_bytes``
      (64 KiB to 64 MiB, default 4 MiB; checked before they are parsed, which takes
      pypdf about 2 s a megabyte), or its text is over ``max_document_bytes`` (1 KiB
      to 256 MiB, default 16 MiB; extraction stops there);
    - ``pdf-timeout``: reading its pages took longer than ``max_parse_seconds`` (1 to
      3,600, default 60); the deadline is checked before each page and while a page's
      operators are read, so a document stops within one page's parse of it (a few
      seconds at most under the content bound); the message names the page reached;
    - ``pdf-unreadable``: pypdf cannot open it, it is encrypted with a password
      (an empty user password is tried), its page tree is cyclic or deeper than 100,
      or a page cannot be read (its contents are not a stream, its resources are not
      a dictionary, or pypdf fails on it); the message names the page. No exception
      from pypdf escapes unclassified;
    - ``pdf-no-text``: no page has a text layer, as in a scan. OCR is never done;
    - ``read-failed`` for I/O errors, and ``unsupported-media-type`` for another
      media type, a text source, or when pypdf is not installed (naming the extra).

    Parsing runs in a worker thread (``asyncio.to_thread``), never on the event loop.
    """

    media_types = frozenset({MEDIA_TYPE})

    def __init__(
        self,
        max_file_bytes: int = 64 << 20,
        max_pages: int = 5_000,
        max_document_bytes: int = 16 << 20,
        *,
        max_parse_seconds: int = 60,
        max_page_content_bytes: int = 4 << 20,
    ) -> None:
        self.max_file_bytes = check_bound("max_file_bytes", max_file_bytes, *MAX_FILE_BYTES_BOUNDS)
        self.max_pages = check_bound("max_pages", max_pages, *MAX_PAGES_BOUNDS)
        self.max_document_bytes = check_bound("max_document_bytes", max_document_bytes, *MAX_DOCUMENT_BYTES_BOUNDS)
        self.max_parse_seconds = check_bound("max_parse_seconds", max_parse_seconds, *MAX_PARSE_SECONDS_BOUNDS)
        self.max_page_content_bytes = check_bound(
            "max_page_content_bytes", max_page_content_bytes, *MAX_PAGE_CONTENT_BYTES_BOUNDS
        )

    def can_load(self, source: Source) -> bool:
        """True for an ``application/pdf`` file (even without pypdf: ``load`` then says why)."""
        return source.media_type == MEDIA_TYPE and source.path is not None

    async def load(self, source: Source) -> LoadedDocument:
        """The PDF's text, page starts and title; raises ``LoadError`` as the class says."""
        if not self.can_load(source):
            raise unsupported(source, "the PDF loader takes application/pdf files")
        if _pypdf() is None:
            raise unsupported(source, 'PDF support needs the pdf extra: pip install "graphrag-orm[pdf]"')
        return await asyncio.to_thread(self._load, source)

    def _load(self, source: Source) -> LoadedDocument:
        from pypdf import PdfReader

        assert source.path is not None  # can_load checked it
        data = read_bounded(source.path, self.max_file_bytes, "max_file_bytes")
        where = source.source_uri
        started = time.monotonic()
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise _unreadable(f"{where} is encrypted with a password")
            # Counted in the page tree first: building pypdf's page list reads every page
            # object (37 s for 100,000 empty pages), only to be refused.
            self._check_page_count(reader, where)
            page_count = len(reader.pages)
        except LoadError:
            raise
        except Exception as error:  # pypdf raises many types for a damaged file
            raise _unreadable(f"{where} cannot be opened as a PDF: {_describe(error)}") from None
        if page_count > self.max_pages:
            raise _too_many_pages(where, f"{page_count:,}", self.max_pages)

        deadline = _Deadline(started, self.max_parse_seconds, where, page_count)
        texts: list[bytes] = []
        total = 0
        for index in range(page_count):
            deadline.check(index)
            try:
                page = reader.pages[index]
                _check_page(page)
                self._check_page_content(page, where, index, page_count)
                text = _page_text(page, functools.partial(deadline.check, index))
            except LoadError:
                raise
            except Exception as error:  # a damaged page must not end the caller's run
                raise _unreadable(
                    f"{where}: page {index + 1} of {page_count} cannot be read: {_describe(error)}"
                ) from None
            encoded = text.encode("utf-8")
            total += len(encoded) + (2 if total and encoded else 0)
            if total > self.max_document_bytes:
                raise LoadError(
                    DocumentErrorCode.DOCUMENT_TOO_LARGE,
                    f"{where}: the text of its first {index + 1} pages is over max_document_bytes "
                    f"({self.max_document_bytes:,} bytes)",
                )
            texts.append(encoded)

        utf8, page_starts = _join_pages(texts)
        if not utf8:
            raise LoadError(
                DocumentErrorCode.PDF_NO_TEXT,
                f"{where} has no text layer on any of its {page_count} pages (a scan needs OCR first)",
            )
        title = source.metadata.title if source.metadata.title is not None else _title(reader)
        return LoadedDocument(
            source_uri=source.source_uri,
            media_type=MEDIA_TYPE,
            title=title,
            utf8=utf8,
            page_starts=page_starts,
        )

    def _check_page_count(self, reader: PdfReader, where: str) -> None:
        """Refuse more than ``max_pages`` pages, counted in the page tree without building a page."""
        counted = _count_pages(reader, self.max_pages)
        if counted > self.max_pages:
            declared = _declared_count(reader)
            shown = f"{declared:,}" if declared is not None and declared > self.max_pages else None
            raise _too_many_pages(where, shown or f"more than {self.max_pages:,}", self.max_pages)

    def _check_page_content(self, page: PageObject, where: str, index: int, page_count: int) -> None:
        """Refuse a page whose operators would take pypdf too long to parse (about 2 s a megabyte)."""
        size = _content_bytes(page, self.max_page_content_bytes)
        if size > self.max_page_content_bytes:
            raise LoadError(
                DocumentErrorCode.DOCUMENT_TOO_LARGE,
                f"{where}: page {index + 1} of {page_count} has {size:,} bytes of content, "
                f"over max_page_content_bytes ({self.max_page_content_bytes:,} bytes)",
            )


class _Deadline:
    """``max_parse_seconds`` from the start of parsing: checked between pages and between operators."""

    __slots__ = ("at", "page_count", "seconds", "where")

    def __init__(self, started: float, seconds: int, where: str, page_count: int) -> None:
        self.at = started + seconds
        self.seconds = seconds
        self.where = where
        self.page_count = page_count

    def check(self, index: int) -> None:
        if time.monotonic() > self.at:
            raise LoadError(
                DocumentErrorCode.PDF_TIMEOUT,
                f"{self.where}: reading its pages took over max_parse_seconds ({self.seconds:,} s); "
                f"stopped at page {index + 1} of {self.page_count:,}",
            )


def _too_many_pages(where: str, pages: str, limit: int) -> LoadError:
    return LoadError(DocumentErrorCode.DOCUMENT_TOO_LARGE, f"{where} has {pages} pages, over max_pages ({limit:,})")


def _page_tree(reader: PdfReader) -> Any:
    """The root of the page tree (a dictionary); ``ValueError`` when there is none."""
    from pypdf.generic import DictionaryObject

    tree = reader.root_object.get("/Pages")
    tree = tree.get_object() if tree is not None else None
    if not isinstance(tree, DictionaryObject):
        raise ValueError("it has no page tree")
    return tree


def _declared_count(reader: PdfReader) -> int | None:
    """The page tree's own ``/Count`` (which may be wrong), or None."""
    try:
        count = _page_tree(reader).get("/Count")
        count = count.get_object() if count is not None else None
    except Exception:  # a damaged tree only costs the figure in the message
        return None
    return int(count) if isinstance(count, int) and not isinstance(count, bool) else None


def _count_pages(reader: PdfReader, limit: int) -> int:
    """The pages of the page tree as pypdf would list them, counted without building them.

    A node is a page by pypdf's rule (``/Type /Page``, or no ``/Type`` and no ``/Kids``), and
    each reference counts, as in pypdf's list. The walk stops as soon as the count passes
    ``limit``, or when the tree has more nodes than that many pages need (returning
    ``limit + 1``); a cyclic tree or one deeper than 100 raises ``ValueError``.
    """
    from pypdf.generic import ArrayObject, DictionaryObject

    tree = _page_tree(reader)
    budget = _TREE_NODES_PER_PAGE * limit + _TREE_NODES_SLACK
    count = nodes = 0
    path: list[int] = [id(tree)]
    stack = [iter(_kids(tree))]
    while stack:
        kid = next(stack[-1], None)
        if kid is None:
            stack.pop()
            path.pop()
            continue
        node = kid.get_object()
        if not isinstance(node, DictionaryObject) or not node:
            continue  # pypdf skips what is not a dictionary, and empty ones
        nodes += 1
        if nodes > budget:
            return limit + 1
        kind = node.get("/Type")
        if kind == "/Pages" or (kind is None and "/Kids" in node):
            if id(node) in path:
                raise ValueError("its page tree is cyclic")
            if len(path) > _TREE_DEPTH:
                raise ValueError(f"its page tree is deeper than {_TREE_DEPTH}")
            kids = _kids(node)
            if not isinstance(kids, ArrayObject):
                raise ValueError("a page tree node's /Kids is not an array")
            path.append(id(node))
            stack.append(iter(kids))
        elif kind is None or kind == "/Page":
            count += 1
            if count > limit:
                return count
    return count


def _kids(node: Any) -> Any:
    from pypdf.generic import ArrayObject, NullObject

    kids = node.get("/Kids")
    kids = kids.get_object() if kids is not None else None
    return ArrayObject() if kids is None or isinstance(kids, NullObject) else kids


def _content_bytes(page: PageObject, limit: int) -> int:
    """The decoded bytes of a page's content streams and of the form XObjects its resources name.

    Decoding is fast (zlib) and pypdf bounds it; parsing what was decoded is what is slow.
    Forms inside forms are not followed (the deadline covers them). Stops adding past ``limit``.
    """
    from pypdf.generic import DictionaryObject, StreamObject

    total = 0
    contents = page.get_contents()
    if contents is not None:
        total += len(contents.get_data())
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    forms = resources.get("/XObject") if isinstance(resources, DictionaryObject) else None
    forms = forms.get_object() if forms is not None else None
    if isinstance(forms, DictionaryObject):
        for reference in forms.values():
            if total > limit:
                break
            form = reference.get_object()
            if isinstance(form, StreamObject) and form.get("/Subtype") == "/Form":
                total += len(form.get_data())
    return total


def _unreadable(message: str) -> LoadError:
    return LoadError(DocumentErrorCode.PDF_UNREADABLE, message)


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _join_pages(texts: Sequence[bytes]) -> tuple[bytes, tuple[int, ...]]:
    """The pages' texts joined by blank lines, and where each page starts."""
    parts: list[bytes] = []
    starts: list[int | None] = []
    length = 0
    for text in texts:
        if not text:
            starts.append(None)  # filled below: an empty page starts where the next text does
            continue
        if parts:
            parts.append(b"\n\n")
            length += 2
        starts.append(length)
        parts.append(text)
        length += len(text)
    following = length
    filled: list[int] = [0] * len(starts)
    for index in range(len(starts) - 1, -1, -1):
        start = starts[index]
        following = start if start is not None else following
        filled[index] = following
    return b"".join(parts), tuple(filled)


def _title(reader: PdfReader) -> str | None:
    try:
        metadata = reader.metadata
        title = metadata.title if metadata is not None else None
    except Exception:  # a damaged info dictionary only costs the title
        return None
    if title is None:
        return None
    return clean_title(str(title).strip())


class _Line:
    __slots__ = ("blank_before", "height", "parts", "y")

    def __init__(self, y: float, height: float, blank_before: bool) -> None:
        self.y = y
        self.height = height
        self.blank_before = blank_before
        self.parts: list[str] = []


def _check_page(page: PageObject) -> None:
    from pypdf.generic import ArrayObject, DictionaryObject, NullObject, StreamObject

    contents = page.get("/Contents")
    contents = contents.get_object() if contents is not None else None
    if isinstance(contents, ArrayObject):
        if not all(isinstance(part.get_object(), StreamObject) for part in contents):
            raise ValueError("its contents are not all streams")
    elif contents is not None and not isinstance(contents, (StreamObject, NullObject)):
        raise ValueError("its contents are not a stream")
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    if resources is not None and not isinstance(resources, (DictionaryObject, NullObject)):
        raise ValueError("its resources are not a dictionary")


def _page_text(page: PageObject, check_deadline: Callable[[], None] = lambda: None) -> str:
    """One page's text: lines in pypdf's order, paragraphs split by vertical gaps.

    The page passed :func:`_check_page`. ``check_deadline`` is called before each operator
    pypdf reads (and raises to stop).
    """
    lines: list[_Line] = []
    state: dict[str, Any] = {"line": None, "blank": False}

    def before_operator(operator: Any, operands: Any, cm: Any, tm: Any) -> None:
        check_deadline()

    def visit(text: Any, cm: Any, tm: Any, font: Any, font_size: Any) -> None:
        if not text:
            return
        text = _UNWANTED.sub("", str(text).replace("\r\n", "\n").replace("\r", "\n"))
        matrix = _multiply(tm, cm)
        height = abs(float(font_size or 0.0)) * math.hypot(matrix[2], matrix[3]) or 1.0
        for number, piece in enumerate(text.split("\n")):
            if number > 0:
                if state["line"] is None:
                    state["blank"] = True  # two line breaks in a row: an empty line
                state["line"] = None
            if piece:
                line = state["line"]
                if line is None:
                    line = _Line(matrix[5], height, state["blank"])
                    state["line"], state["blank"] = line, False
                    lines.append(line)
                line.parts.append(piece)

    page.extract_text(visitor_operand_before=before_operator, visitor_text=visit)

    paragraphs: list[list[str]] = []
    previous: _Line | None = None
    for line in lines:
        text = "".join(line.parts).rstrip(" \t")
        if not text.strip():
            continue
        if previous is None or _breaks(previous, line):
            paragraphs.append([])
        paragraphs[-1].append(text)
        previous = line
    return "\n\n".join("\n".join(paragraph) for paragraph in paragraphs)


def _breaks(previous: _Line, line: _Line) -> bool:
    if line.blank_before:
        return True
    drop = previous.y - line.y
    height = max(previous.height, line.height)
    return drop > _PARAGRAPH_GAP * height or drop < -0.5 * height


def _multiply(m: Sequence[float], n: Sequence[float]) -> tuple[float, ...]:
    """The product of two PDF matrices ``[a b c d e f]`` (text matrix times current matrix)."""
    a, b, c, d, e, f = (float(value) for value in m)
    p, q, r, s, t, u = (float(value) for value in n)
    return (a * p + b * r, a * q + b * s, c * p + d * r, c * q + d * s, e * p + f * r + t, e * q + f * s + u)
