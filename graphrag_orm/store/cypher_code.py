"""The code of a Cypher text, as the sandbox's text gate reads it: tokens, nothing hidden.

Comments are blanked, string literals emptied and backtick-quoted names unquoted (and
marked: a quoted name is never a keyword), so neither a comment nor a string hides a
keyword or trips one. Where this tokenizer and the server's could differ, it errs on
the side of showing more code: a line comment ends at any line or paragraph separator,
and every non-space character that is not ASCII punctuation is part of a name. A text
with an unterminated string, comment or quoted name is ``invalid-query``
(:class:`~graphrag_orm.errors.QueryRefused`). Pure.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from enum import Enum

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import QueryRefused

__all__ = ["Kind", "Token", "code_of", "tokenize"]

#: ASCII punctuation is Cypher's syntax; every other non-space character can be part of a name.
_SYMBOLS = frozenset(string.punctuation) - {"_"}
#: Where a line comment ends. More than Cypher's own line ends: ending a comment early
#: only shows more of the query to the gate, never less.
_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class Kind(Enum):
    NAME = "name"
    NUMBER = "number"
    STRING = "string"
    PARAMETER = "parameter"
    SYMBOL = "symbol"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str
    #: A backtick-quoted name: never a keyword.
    quoted: bool = False
    #: A string literal's content, its escapes decoded (its ``text`` is always empty).
    value: str = ""

    @property
    def word(self) -> str:
        """The keyword this token is, upper-cased, or "" (a quoted name, a symbol, a value)."""
        return self.text.upper() if self.kind is Kind.NAME and not self.quoted else ""

    def code(self) -> str:
        if self.kind is Kind.STRING:
            return "''"
        if self.kind is Kind.PARAMETER:
            return "$" + self.text
        return self.text


def _invalid(message: str) -> QueryRefused:
    return QueryRefused(ErrorCode.INVALID_QUERY, message)


def _is_name_char(ch: str) -> bool:
    return not ch.isspace() and ch not in _SYMBOLS


_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f"}


def _unescaped(body: str) -> str:
    """A string literal's content with Cypher's escapes decoded (``\\u0065`` is ``e``)."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        code = body[i + 1]
        width = 4 if code == "u" else 8 if code == "U" else 0
        digits = body[i + 2 : i + 2 + width]
        if width and len(digits) == width and all(c in string.hexdigits for c in digits):
            out.append(chr(min(int(digits, 16), 0x10FFFF)))
            i += 2 + width
            continue
        out.append(_ESCAPES.get(code, code))
        i += 2
    return "".join(out)


def _quoted(text: str, i: int) -> tuple[str, int]:
    """A backtick-quoted name from ``text[i] == '`'``: its content (doubled backticks are one) and the end."""
    parts: list[str] = []
    while i < len(text) and text[i] == "`":
        end = text.find("`", i + 1)
        if end < 0:
            raise _invalid("the query has an unterminated quoted name")
        parts.append(text[i + 1 : end])
        i = end + 1
    return "`".join(parts), i


def tokenize(text: str) -> list[Token]:
    """The query's code as tokens: no comments, strings emptied, quoted names unquoted."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("//", i):
            i += 2
            while i < n and text[i] not in _LINE_ENDS:
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise _invalid("the query has an unterminated comment")
            i = end + 2
        elif ch in "'\"":
            start = i = i + 1
            while i < n and text[i] != ch:
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                raise _invalid("the query has an unterminated string")
            tokens.append(Token(Kind.STRING, "", value=_unescaped(text[start:i])))
            i += 1
        elif ch == "`":
            name, i = _quoted(text, i)
            tokens.append(Token(Kind.NAME, name, quoted=True))
        elif ch == "$":
            if i + 1 < n and text[i + 1] == "`":
                name, i = _quoted(text, i + 1)
            else:
                start = i = i + 1
                while i < n and _is_name_char(text[i]):
                    i += 1
                name = text[start:i]
            tokens.append(Token(Kind.PARAMETER, name))
        elif _is_name_char(ch):
            start = i
            while i < n and _is_name_char(text[i]):
                i += 1
            if ch.isdigit() and i + 1 < n and text[i] == "." and text[i + 1].isdigit():
                i += 1
                while i < n and _is_name_char(text[i]):
                    i += 1
            kind = Kind.NUMBER if ch.isdigit() else Kind.NAME
            tokens.append(Token(kind, text[start:i]))
        elif text.startswith("..", i):
            tokens.append(Token(Kind.SYMBOL, ".."))
            i += 2
        else:
            tokens.append(Token(Kind.SYMBOL, ch))
            i += 1
    return tokens


def code_of(cypher: str) -> str:
    """The code the gate reads: tokens joined by spaces, ``''`` for every string, names unquoted."""
    return " ".join(token.code() for token in tokenize(cypher))
