"""Answer export: one answer or refusal as one JSON document, read back and checked offline.

The document::

    {"format": "graphrag-orm-answer/1",
     "exportedUtc": "2026-10-29T12:00:00.000000+00:00",
     "toolkit": "0.1.0",
     "answer": {"disposition": "Answered", "text": ..., "citations": [...], "reason": null,
                "evidence": {"question": ..., "items": [...], "context": [...], ...},
                "receipt": {"chatCalls": 1, ...}}}

Names are camelCase and enums are written as their values; ``textOrigin`` is
written only where it is set, so output for other documents does not change. The
evidence items hold the passages' text: keep an export as you keep the documents.

Not included: signing. :meth:`AnswerExport.check` finds an edited quote, span,
page, grounding or origin, but not a passage edited together with its quote.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from typing import Any, Final

from pydantic import ValidationError

from graphrag_orm.answers.values import Answer, Disposition
from graphrag_orm.codes import ErrorCode, RefusalReason
from graphrag_orm.errors import ExportError

__all__ = ["EXPORT_FORMAT", "AnswerExport", "ExportError"]

EXPORT_FORMAT: Final = "graphrag-orm-answer/1"
_FALLBACK_VERSION: Final = "0.1.0"
_REASONS: Final = frozenset(reason.value for reason in RefusalReason)


def _toolkit_version() -> str:
    try:
        return metadata.version("graphrag-orm")
    except metadata.PackageNotFoundError:
        return _FALLBACK_VERSION


def _drop_unset_origins(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _drop_unset_origins(inner)
            for key, inner in value.items()
            if not (key == "textOrigin" and inner is None)
        }
    if isinstance(value, list):
        return [_drop_unset_origins(inner) for inner in value]
    return value


class AnswerExport:
    """Writes, reads and checks answer exports; :meth:`check` needs no database."""

    @staticmethod
    def to_json(answer: Answer) -> str:
        """The export document of ``answer``, indented for reading; ``exportedUtc`` is now, in UTC."""
        document = {
            "format": EXPORT_FORMAT,
            "exportedUtc": datetime.now(UTC).isoformat(timespec="microseconds"),
            "toolkit": _toolkit_version(),
            "answer": _drop_unset_origins(answer.model_dump(mode="json", by_alias=True)),
        }
        return json.dumps(document, ensure_ascii=False, indent=2)

    @staticmethod
    def from_json(text: str) -> Answer:
        """The answer of an export document.

        Raises :class:`ExportError` (``invalid-export``) for text that is not JSON, a
        format other than ``graphrag-orm-answer/1``, an answer without its
        ``citations`` list or ``evidence`` object, or any field that does not
        validate. It does not check the citations: call :meth:`check` for that.
        """
        try:
            document = json.loads(text)
        except ValueError as error:
            raise ExportError(ErrorCode.INVALID_EXPORT, f"the export is not JSON: {error}") from None
        if not isinstance(document, dict):
            raise ExportError(ErrorCode.INVALID_EXPORT, "the export is not a JSON object")
        if document.get("format") != EXPORT_FORMAT:
            raise ExportError(
                ErrorCode.INVALID_EXPORT, f"the export's format is {document.get('format')!r}, not {EXPORT_FORMAT!r}"
            )
        answer = document.get("answer")
        if not isinstance(answer, dict):
            raise ExportError(ErrorCode.INVALID_EXPORT, "the export has no answer object")
        if not isinstance(answer.get("citations"), list):
            raise ExportError(ErrorCode.INVALID_EXPORT, "the answer has no citations list")
        if not isinstance(answer.get("evidence"), dict):
            raise ExportError(ErrorCode.INVALID_EXPORT, "the answer has no evidence")
        try:
            return Answer.model_validate(answer)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}" for item in error.errors()
            )
            raise ExportError(ErrorCode.INVALID_EXPORT, f"the answer does not validate: {problems}") from None

    @staticmethod
    def check(answer: Answer | Mapping[str, Any]) -> list[str]:
        """What is wrong with ``answer``, offline; an empty list when every rule holds.

        ``answer`` is an :class:`Answer` or the ``answer`` object of an export as
        parsed JSON (camelCase). Rules:

        - ``Answered``: non-blank text, at least one citation, no reason.
        - ``InsufficientEvidence``: a reason that is a refusal reason, no text, no citations.
        - Each citation names an evidence *item* (never context) by chunk id, with that
          item's document id; its span is ordered, non-empty and inside the item's
          span; its quote's UTF-8 bytes are exactly the item's bytes at the span
          (bytes are compared, so a span splitting a character never passes); and its
          ``page``, ``end_page``, ``grounding`` and ``text_origin`` are what the item
          says of those bytes.
        - Each item cited has text whose UTF-8 length is its span's.

        Malformed input (missing or mistyped lists, an inverted span) is reported as
        problems; this never raises.
        """
        problems: list[str] = []
        try:
            _check(_Reader(answer), problems)
        except Exception as error:  # a shape no rule foresaw; still a report, never a raise
            problems.append(f"the answer could not be read: {type(error).__name__}")
        return problems


class _Reader:
    """Reads an Answer or its camelCase JSON alike, field by snake_case name."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def get(self, name: str) -> Any:
        if isinstance(self.source, Mapping):
            camel = name.split("_")[0] + "".join(part.title() for part in name.split("_")[1:])
            return self.source.get(camel, self.source.get(name))
        return getattr(self.source, name, None)

    def list(self, name: str) -> list[_Reader] | None:
        value = self.get(name)
        if not isinstance(value, Sequence) or isinstance(value, str | bytes):
            return None
        return [_Reader(entry) for entry in value]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _utf8(value: Any) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _value(value: Any) -> Any:
    """An enum's value, anything else as it is (a Mapping holds values already)."""
    return getattr(value, "value", value)


def _page_of(pages: list[_Reader] | None, offset: int) -> int | None:
    # EvidenceItem.page_of, over a reader: the last page starting at or before offset.
    if not pages:
        return None
    page = _value(pages[0].get("page"))
    for start in pages:
        start_byte = _int(start.get("start_byte"))
        if start_byte is not None and start_byte <= offset:
            page = start.get("page")
        else:
            break
    return _int(page)


def _check(answer: _Reader, problems: list[str]) -> None:
    disposition = _value(answer.get("disposition"))
    text = answer.get("text")
    reason = answer.get("reason")
    citations = answer.list("citations")
    evidence_value = answer.get("evidence")
    evidence = _Reader(evidence_value) if evidence_value is not None else None
    items = evidence.list("items") if evidence is not None else None
    if citations is None:
        problems.append("the answer has no citations list")
    if evidence is None:
        problems.append("the answer has no evidence")
    elif items is None:
        problems.append("the evidence has no items list")

    if disposition == Disposition.ANSWERED.value:
        if not isinstance(text, str) or not text.strip():
            problems.append("an Answered answer has no text")
        if citations is not None and not citations:
            problems.append("an Answered answer has no citations")
        if reason is not None:
            problems.append("an Answered answer has a refusal reason")
    elif disposition == Disposition.INSUFFICIENT_EVIDENCE.value:
        if reason not in _REASONS:
            problems.append(f"a refusal's reason {reason!r} is not a refusal reason")
        if text is not None:
            problems.append("a refusal has text")
        if citations:
            problems.append("a refusal has citations")
    else:
        problems.append(f"the disposition {disposition!r} is neither Answered nor InsufficientEvidence")

    by_chunk: dict[str, _Reader] = {}
    for item in items or []:
        chunk_id = item.get("chunk_id")
        if isinstance(chunk_id, str):
            by_chunk.setdefault(chunk_id, item)
    for number, citation in enumerate(citations or [], start=1):
        _check_citation(number, citation, by_chunk, problems)


def _check_citation(number: int, citation: _Reader, items: dict[str, _Reader], problems: list[str]) -> None:
    def problem(message: str) -> None:
        problems.append(f"citation {number}: {message}")

    chunk_id = citation.get("chunk_id")
    item = items.get(chunk_id) if isinstance(chunk_id, str) else None
    if item is None:
        problem(f"chunk {chunk_id!r} is not an evidence item")
        return
    if citation.get("document_id") != item.get("document_id"):
        problem(f"document {citation.get('document_id')!r} is not the evidence item's {item.get('document_id')!r}")
    start, end = _int(citation.get("start_byte")), _int(citation.get("end_byte"))
    item_start, item_end = _int(item.get("start_byte")), _int(item.get("end_byte"))
    stored = _utf8(item.get("text"))
    if start is None or end is None:
        problem("its span is missing")
        return
    if item_start is None or item_end is None or stored is None:
        problem("its evidence item has no readable span or text")
        return
    if len(stored) != item_end - item_start:
        problem(f"its evidence item's text is {len(stored)} bytes, but its span [{item_start}, {item_end}) is not")
        return
    if start > end:
        problem(f"its span [{start}, {end}) is inverted")
        return
    if start == end:
        problem(f"its span [{start}, {end}) is empty")
        return
    if start < item_start or end > item_end:
        problem(f"its span [{start}, {end}) is outside its evidence item's [{item_start}, {item_end})")
        return
    quote = _utf8(citation.get("quote"))
    if quote is None or quote != stored[start - item_start : end - item_start]:
        problem(f"its quote is not the evidence item's bytes [{start}, {end})")
    pages = item.list("pages")
    expected_pages = (_page_of(pages, start), _page_of(pages, end - 1))
    given_pages = (_int(citation.get("page")), _int(citation.get("end_page")))
    if given_pages != expected_pages:
        problem(f"its pages {given_pages} are not its evidence item's {expected_pages}")
    if _value(citation.get("grounding")) != _value(item.get("grounding")):
        problem("its grounding is not its evidence item's")
    if citation.get("text_origin") != item.get("text_origin"):
        problem("its text origin is not its evidence item's")
