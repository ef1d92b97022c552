"""Decoding the ``answer`` string of a JSON reply while the reply is still arriving.

:class:`AnswerTextDecoder` is fed the reply's text in pieces of any size, down to
one character, and returns the decoded characters of the top-level ``"answer"``
string that each piece completes. Joined, its output is exactly the value
``json.loads(reply)["answer"]`` for any reply the answer parser reads (before the
answer is trimmed).

Its promises:

- **Never inside an escape.** A character is returned only once its escape
  sequence (``\\n``, ``\\u00e9``, ...) has fully arrived, and a surrogate pair
  (``\\ud83d\\ude00``) only once both halves have, as one character.
- **Only the first top-level ``answer``.** Keys of nested objects, later duplicate
  ``answer`` keys, and an ``answer`` that is ``null`` give nothing.
- **Nothing after a refusal.** Once a top-level ``insufficient`` string holds a
  non-whitespace character, nothing more is returned: a reply that starts with
  ``insufficient`` produces no text.
- **Stops on broken JSON.** At the first character that cannot continue a JSON
  object of this shape (a raw control character inside a string, an unknown escape,
  a lone surrogate, a top-level value that is not an object, text after it), it
  returns nothing more and :attr:`AnswerTextDecoder.failed` is true. It does not
  validate numbers or literals: the whole reply is judged by the answer parser once
  it has arrived, and text already returned is then withdrawn if that refuses.

Work is linear in the reply's length; runs of plain characters inside a string are
taken in one step. It holds one escape sequence and the current top-level key.
"""

from __future__ import annotations

import re
from typing import Final, Literal

__all__ = ["AnswerTextDecoder"]

_WHITESPACE: Final = " \t\n\r"
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PLAIN: Final = re.compile(r'[^"\\\x00-\x1f]+')

_Role = Literal["key", "answer", "insufficient", "other"]
_Expect = Literal["key", "colon", "value", "comma"]


class AnswerTextDecoder:
    """Incremental decoder of the top-level ``answer`` string of a JSON reply (see the module)."""

    def __init__(self, field: str = "answer", declined_by: str = "insufficient") -> None:
        self._field = field
        self._declined_by = declined_by
        self._stack: list[str] = []
        self._expect: _Expect = "key"
        self._after_comma = False
        self._done = False
        self._in_scalar = False
        self._in_string = False
        self._role: _Role = "other"
        self._key: list[str] = []
        self._current_key = ""
        self._escape = False
        self._hex: str | None = None
        self._high: int | None = None
        self._field_seen = False
        self._declined = False
        self._failed = False

    @property
    def failed(self) -> bool:
        """Whether the reply stopped being JSON of the expected shape; nothing more is returned."""
        return self._failed

    @property
    def declined(self) -> bool:
        """Whether a top-level ``insufficient`` string with non-whitespace content has been read."""
        return self._declined

    def feed(self, piece: str) -> str:
        """The answer characters that ``piece`` completes (possibly ``""``)."""
        out: list[str] = []
        index, size = 0, len(piece)
        while index < size and not self._failed:
            index = self._string(piece, index, out) if self._in_string else self._structure(piece, index)
        return "".join(out)

    def _fail(self) -> None:
        self._failed = True

    def _structure(self, piece: str, index: int) -> int:
        char = piece[index]
        if self._in_scalar:
            if char not in _WHITESPACE and char not in ",]}":
                return index + 1
            self._in_scalar = False
        if char in _WHITESPACE:
            return index + 1
        if self._done or (not self._stack and char != "{"):
            self._fail()
            return index + 1
        if not self._stack:
            self._stack.append("{")
            self._expect = "key"
            return index + 1
        if len(self._stack) == 1:
            self._top_level(char)
        else:
            self._nested(char)
        return index + 1

    def _top_level(self, char: str) -> None:
        if self._expect == "key":
            if char == '"':
                self._start_string("key")
            elif char == "}" and not self._after_comma:
                self._close()
            else:
                self._fail()
        elif self._expect == "colon":
            if char == ":":
                self._expect = "value"
            else:
                self._fail()
        elif self._expect == "value":
            self._expect = "comma"
            key = self._current_key
            if char == '"':
                if key == self._field and not self._field_seen:
                    self._field_seen = True
                    self._start_string("answer")
                elif key == self._declined_by:
                    self._start_string("insufficient")
                else:
                    self._start_string("other")
            elif char in "{[":
                self._stack.append(char)
            elif char in ",:]}":
                self._fail()
            else:
                if key == self._field:
                    self._field_seen = True
                self._in_scalar = True
        elif char == ",":
            self._expect = "key"
            self._after_comma = True
        elif char == "}":
            self._close()
        else:
            self._fail()

    def _nested(self, char: str) -> None:
        if char == '"':
            self._start_string("other")
        elif char in "{[":
            self._stack.append(char)
        elif char in "}]":
            if self._stack.pop() != ("{" if char == "}" else "["):
                self._fail()
        elif char not in ",:":
            self._in_scalar = True

    def _close(self) -> None:
        self._stack.pop()
        self._done = True

    def _start_string(self, role: _Role) -> None:
        self._in_string = True
        self._role = role
        if role == "key":
            self._key = []

    def _end_string(self) -> None:
        self._in_string = False
        if self._role == "key":
            self._current_key = "".join(self._key)
            self._expect = "colon"
            self._after_comma = False

    def _take(self, text: str, out: list[str]) -> None:
        if self._role == "answer":
            if not self._declined:
                out.append(text)
        elif self._role == "key":
            self._key.append(text)
        elif self._role == "insufficient" and text.strip():
            self._declined = True

    def _code_unit(self, code: int, out: list[str]) -> None:
        if 0xD800 <= code <= 0xDBFF:
            if self._high is not None:
                self._fail()
            self._high = code
        elif 0xDC00 <= code <= 0xDFFF:
            if self._high is None:
                self._fail()
                return
            self._take(chr(0x10000 + ((self._high - 0xD800) << 10) + (code - 0xDC00)), out)
            self._high = None
        elif self._high is not None:
            self._fail()
        else:
            self._take(chr(code), out)

    def _string(self, piece: str, index: int, out: list[str]) -> int:
        size = len(piece)
        while index < size and not self._failed:
            char = piece[index]
            if self._hex is not None:
                if char not in _HEX:
                    self._fail()
                    break
                self._hex += char
                index += 1
                if len(self._hex) == 4:
                    code, self._hex = int(self._hex, 16), None
                    self._code_unit(code, out)
                continue
            if self._escape:
                self._escape = False
                index += 1
                if char == "u":
                    self._hex = ""
                elif self._high is not None or char not in _ESCAPES:
                    self._fail()
                else:
                    self._take(_ESCAPES[char], out)
                continue
            if self._high is not None:
                # Only the "\u" of the low half may follow a high surrogate.
                if char != "\\":
                    self._fail()
                    break
                self._escape = True
                index += 1
                continue
            plain = _PLAIN.match(piece, index)
            if plain is not None:
                self._take(plain.group(), out)
                index = plain.end()
                continue
            index += 1
            if char == '"':
                self._end_string()
                break
            if char == "\\":
                self._escape = True
                continue
            self._fail()  # a raw control character: not JSON
        return index
