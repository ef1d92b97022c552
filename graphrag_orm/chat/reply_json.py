"""Reading a model's JSON reply as one object, strictly: the shared first step of every reply parser.

A reply is one JSON value (whitespace around it allowed, a Markdown fence not), an
object, with no repeated key and no key outside the parser's own. Anything else is a
problem, described without quoting the reply (it may hold anything). Strings holding a
lone surrogate are checked with :func:`is_utf8` once the parser has read its fields.
:func:`finished_part` is the first step for a reply cut at the output limit.
"""

from __future__ import annotations

import json
from collections.abc import Set
from typing import Any, Final

import jiter

__all__ = ["CUT_REPLY", "finished_part", "is_utf8", "read_object"]

#: The problem of a reply cut at the output limit before it finished anything usable.
CUT_REPLY: Final = "the reply was cut off at the output limit"


def finished_part(text: str, key: str) -> str | None:
    """What a JSON-object reply cut at the output limit finished, as JSON text for the strict parser.

    Read as far as it went (jiter's partial JSON: a string the cut fell inside is left out), the
    object keeps its finished keys, and its ``key`` list loses the last entry it began, since the
    cut may fall inside that entry's fields. ``None`` when the reply is no object, or finished
    no entry of ``key``.
    """
    try:
        value = jiter.from_json(text.encode("utf-8"), partial_mode="on")
    except ValueError:
        return None
    entries = value.get(key) if isinstance(value, dict) else None
    if not isinstance(entries, list) or len(entries) < 2:
        return None
    return json.dumps({**value, key: entries[:-1]}, ensure_ascii=False)


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _value in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def read_object(text: str, keys: Set[str]) -> dict[str, Any] | str:
    """The reply's object, or a one-line problem: not JSON, not an object, a repeated or unknown key."""
    try:
        value = json.loads(text, object_pairs_hook=_no_repeated_keys)
    except ValueError as error:  # JSONDecodeError is a ValueError, as is a repeated key
        return "a key is repeated" if str(error) == "duplicate key" else "the reply is not JSON"
    if not isinstance(value, dict):
        return "the reply is not a JSON object"
    unknown = set(value) - set(keys)
    if unknown:
        return f"the reply has unknown keys ({len(unknown)})"
    return value


def is_utf8(text: str) -> bool:
    """False for a string holding a lone surrogate (it cannot be stored or sent as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
