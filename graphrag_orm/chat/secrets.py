"""Secrets a recording must never hold, found as a secret scanner would find them.

An entry is refused (``secret-in-recording``) when it holds what a
secret scanner would flag: the value of a variable whose name contains PASS, SECRET,
TOKEN, KEY, AUTH or CREDENTIAL (any case; also the password after ``user/`` or
``user:``, as in ``NEO4J_AUTH``), or the userinfo of a URL in any variable
(``DATABASE_URL=postgres://app:pw@db``). Each value is found upper- or lower-cased,
split by whitespace, base64-encoded (standard or URL-safe, alone or inside a longer
encoded string) or percent-encoded, and a hint is refused when the value starts inside
it, even if the 80 characters cut it short. Values of 4 to 7 characters are matched
as whole words only; shorter values and flag words (``true``, ``none``...) are never
secrets, because they would match everywhere and protect nothing. A URL with a
password (``scheme://user:password@host``) is refused wherever it comes from, unless
the password is a placeholder (``<password>``, ``${DB_PASSWORD}``, ``***``, ``password``).
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import RecordingRefused
from graphrag_orm.values import strings_in

__all__ = ["MIN_SECRET_LENGTH", "SECRET_NAME", "WORD_SECRET_LENGTH", "check_secrets"]

SECRET_NAME = re.compile(r"pass|secret|token|key|auth|credential", re.IGNORECASE)
"""Variable names whose values are secrets, as secret scanners read them (``NEO4J_AUTH``, ``SMTP_PASS``)."""
MIN_SECRET_LENGTH = 4
"""Shorter values (``1``, ``on``) would match everywhere and protect nothing."""
WORD_SECRET_LENGTH = 8
"""Values shorter than this are matched as whole words only, so ``q7Zx`` does not refuse ``q7Zxa``."""
_FLAG_WORDS = frozenset({"true", "false", "yes", "none", "null", "unset", "enabled", "disabled"})
_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^\s/?#@]+)@")
_USER_PASSWORD = re.compile(r"[^\s/:]+[/:]([^\s/:]+)")
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#@]+)@")
_PLACEHOLDER = re.compile(r"<[^>]*>|\$\{?\w+\}?|\{\w*\}|%s|\*+|x+|password|passwd|pass|pwd|secret", re.IGNORECASE)
_IGNORED = re.compile(r"[\s\u200b\u200c\u200d\u2060\ufeff]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_MIN_ENCODED = 6


@dataclass(frozen=True)
class _SecretForm:
    """One form of one secret value: ``text`` is searched in text with whitespace removed."""

    variable: str
    text: str
    folded: bool  # compared with ASCII letters lower-cased (the value itself, not an encoding)
    word: re.Pattern[str] | None = None  # a short value: whole words of the original text only


def _secret_values(environ: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(variable, value) for every value a secret scanner would flag in ``environ``."""
    for name, value in environ.items():
        pieces: list[str] = []
        if SECRET_NAME.search(name):
            pieces.append(value)
            user_password = _USER_PASSWORD.fullmatch(value.strip())
            if user_password and "://" not in value:
                pieces.append(user_password.group(1))
        for match in _URL_USERINFO.finditer(value):
            userinfo = match.group(1)
            user, colon, password = userinfo.partition(":")
            # Without a password, the user name is the secret (``https://<token>@host``).
            pieces.extend((userinfo, password, unquote(password)) if colon else (user, unquote(user)))
        for piece in dict.fromkeys(piece.strip() for piece in pieces):
            if len(piece) >= MIN_SECRET_LENGTH and piece.lower() not in _FLAG_WORDS:
                yield name, piece


def _base64_forms(value: str) -> set[str]:
    """The characters of ``value``'s base64 that hold at each of the three byte alignments.

    A value encoded inside a longer string (``Basic base64(user:password)``) starts at
    any offset modulo 3; the characters shared with its neighbours' bytes are left out.
    """
    raw = value.encode("utf-8")
    forms: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw).decode("ascii")
        middle = encoded[(shift * 8 + 5) // 6 : (shift + len(raw)) // 3 * 4]
        if len(middle) >= _MIN_ENCODED:
            forms.update((middle, middle.replace("+", "-").replace("/", "_")))
    return forms


def _secret_forms(environ: Mapping[str, str]) -> list[_SecretForm]:
    forms: list[_SecretForm] = []
    for name, value in _secret_values(environ):
        compact = _IGNORED.sub("", value).translate(_ASCII_LOWER)
        if len(compact) < WORD_SECRET_LENGTH:
            word = re.compile(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])", re.IGNORECASE)
            forms.append(_SecretForm(name, compact, folded=True, word=word))
        else:
            forms.append(_SecretForm(name, compact, folded=True))
        escaped = quote(value, safe="")
        if escaped != value and len(escaped) >= WORD_SECRET_LENGTH:
            forms.append(_SecretForm(name, escaped.translate(_ASCII_LOWER), folded=True))
        forms.extend(_SecretForm(name, encoded, folded=False) for encoded in sorted(_base64_forms(value)))
    return forms


def _find_secret(text: str, forms: Sequence[_SecretForm], *, starting_before: int | None = None) -> str | None:
    """The variable whose secret ``text`` holds (one starting before ``starting_before``, when given)."""
    compact = _IGNORED.sub("", text)
    folded = compact.translate(_ASCII_LOWER)
    # Where each compact character sits in ``text``; built only when a start must be placed.
    places = [i for i, c in enumerate(text) if not _IGNORED.fullmatch(c)] if starting_before is not None else None
    for form in forms:
        if form.word is not None:
            match = form.word.search(text)
            if match and (starting_before is None or match.start() < starting_before):
                return form.variable
            continue
        found = (folded if form.folded else compact).find(form.text)
        if found >= 0 and (places is None or places[found] < (starting_before or 0)):
            return form.variable
    return None


def _url_password_at(text: str) -> int | None:
    """Where the first URL password that is not a placeholder starts in ``text``, or None."""
    for match in _URL_PASSWORD.finditer(text):
        if not _PLACEHOLDER.fullmatch(unquote(match.group(1))):
            return match.start(1)
    return None


def check_secrets(entry: dict[str, Any], hint_source: str | None = None, *, hint_length: int) -> None:
    """Refuse an entry holding a secret (numbers are not searched), or whose hint starts one."""
    request = entry.get("request")
    forms = _secret_forms(os.environ)
    for text in strings_in(entry):
        variable = _find_secret(text, forms) if forms else None
        if variable is not None:
            raise RecordingRefused(
                ErrorCode.SECRET_IN_RECORDING,
                f"refused to record request {request}: it contains the value of ${variable}",
            )
        if _url_password_at(text) is not None:
            raise RecordingRefused(
                ErrorCode.SECRET_IN_RECORDING,
                f"refused to record request {request}: it contains a URL with a password (scheme://user:…@host)",
            )
    if hint_source is None:
        return
    # The hint is cut at hint_length characters: a secret starting inside it leaks its first characters.
    widest = max((len(form.text) for form in forms), default=0)
    window = " ".join(hint_source.split())[: hint_length + max(2 * widest, 1000)]
    variable = _find_secret(window, forms, starting_before=hint_length) if forms else None
    url_password = _url_password_at(window)
    if variable is not None or (url_password is not None and url_password < hint_length):
        what = f"the value of ${variable}" if variable is not None else "a URL's password"
        raise RecordingRefused(
            ErrorCode.SECRET_IN_RECORDING, f"refused to record request {request}: its hint holds the start of {what}"
        )
