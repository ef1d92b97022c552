"""Reading an extraction reply: bounded JSON into plain candidates, or a reason it is unreadable.

Nothing here trusts the model: the reply's size and nesting are bounded before it is
parsed, unknown fields are ignored, and every value is checked for its type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from graphrag_orm.errors import Unreadable

__all__ = ["EntityCandidate", "QuoteCandidate", "RawExtraction", "RelationshipCandidate", "parse_reply"]


@dataclass(frozen=True)
class EntityCandidate:
    kind: str
    name: str
    aliases: tuple[str, ...]
    description: str | None
    mentions: tuple[str, ...]


@dataclass(frozen=True)
class RelationshipCandidate:
    type: str
    source: str
    target: str
    payload: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class QuoteCandidate:
    type: str
    speaker: str
    addressee: str | None
    quote: str


@dataclass(frozen=True)
class RawExtraction:
    entities: tuple[EntityCandidate, ...]
    relationships: tuple[RelationshipCandidate, ...]
    quotes: tuple[QuoteCandidate, ...]


def _depth(text: str, limit: int) -> None:
    depth = 0
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                raise Unreadable(f"JSON nested deeper than {limit}")
        elif char in "]}":
            depth -= 1


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Unreadable(f"{where} must be a list of strings")
    return tuple(value)


def _optional_string(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise Unreadable(f"{where} must be a string or null")


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise Unreadable(f"{where} must be a string")
    return value


def parse_reply(text: str, *, max_bytes: int, max_depth: int, payload: tuple[str, ...]) -> RawExtraction:
    """The reply's candidates; raises :class:`Unreadable` for anything not of the schema's shape."""
    if len(text.encode("utf-8")) > max_bytes:
        raise Unreadable(f"reply longer than {max_bytes} bytes")
    stripped = text.strip()
    if stripped.startswith("```"):
        # Some models fence JSON even when asked not to; the fence carries nothing.
        stripped = stripped.strip("`").removeprefix("json").strip()
    _depth(stripped, max_depth)
    try:
        body = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError) as error:
        raise Unreadable(f"not JSON ({type(error).__name__})") from None
    if not isinstance(body, dict):
        raise Unreadable("the reply must be a JSON object")
    for key in ("entities", "relationships"):
        if key not in body or not isinstance(body[key], list):
            raise Unreadable(f'"{key}" must be a list')
    quotes_raw = body.get("quotes") or []
    if not isinstance(quotes_raw, list):
        raise Unreadable('"quotes" must be a list')
    entities: list[EntityCandidate] = []
    for index, item in enumerate(body["entities"]):
        if not isinstance(item, dict):
            raise Unreadable(f"entities[{index}] must be an object")
        entities.append(
            EntityCandidate(
                kind=_string(item.get("kind"), f"entities[{index}].kind"),
                name=_optional_string(item.get("name"), f"entities[{index}].name") or "",
                aliases=_strings(item.get("aliases"), f"entities[{index}].aliases"),
                description=_optional_string(item.get("description"), f"entities[{index}].description"),
                mentions=_strings(item.get("mentions"), f"entities[{index}].mentions"),
            )
        )
    relationships: list[RelationshipCandidate] = []
    for index, item in enumerate(body["relationships"]):
        if not isinstance(item, dict):
            raise Unreadable(f"relationships[{index}] must be an object")
        relationships.append(
            RelationshipCandidate(
                type=_string(item.get("type"), f"relationships[{index}].type"),
                source=_string(item.get("source"), f"relationships[{index}].source"),
                target=_string(item.get("target"), f"relationships[{index}].target"),
                payload={name: _optional_string(item.get(name), f"relationships[{index}].{name}") for name in payload},
            )
        )
    quotes: list[QuoteCandidate] = []
    for index, item in enumerate(quotes_raw):
        if not isinstance(item, dict):
            raise Unreadable(f"quotes[{index}] must be an object")
        quotes.append(
            QuoteCandidate(
                type=_string(item.get("type"), f"quotes[{index}].type"),
                speaker=_string(item.get("speaker"), f"quotes[{index}].speaker"),
                addressee=_optional_string(item.get("addressee"), f"quotes[{index}].addressee"),
                quote=_string(item.get("quote"), f"quotes[{index}].quote"),
            )
        )
    return RawExtraction(tuple(entities), tuple(relationships), tuple(quotes))
