"""ExtractiveChat: the offline stand-in that answers by quoting one evidence sentence.

It is not a model and is labelled as a stand-in wherever its output is shown
(:attr:`ExtractiveChat.label`, ``model == "extractive-stand-in"``). It exists so the
answer path (prompt, reply format, citation checks, streaming, export) runs end to
end with no model and no network.

What it does with a request, by ``schema_name``:

- ``"answer"``: reads the evidence block and the question block of the last user
  message (:mod:`graphrag_orm.chat.evidence_block`), splits every evidence item
  into sentences and picks the sentence sharing the most *content words* with the
  question; ties go to the earlier item, then the earlier sentence. It replies
  ``{"answer": <sentence>, "citations": [{"chunkId": <item>, "quote": <sentence>}],
  "insufficient": null}``, the sentence copied verbatim from the item, so its
  citation always locates. When the best sentence shares fewer than **two** content
  words with the question (**one** when the question has only one content word),
  or the question has none, it replies ``{"answer": null, "citations": null,
  "insufficient": "..."}``.
- ``"rewrite"``: replies ``{"question": <the question of the question block>}``:
  a follow-up is returned unchanged (it never resolves references).
- any other request with a JSON schema: the emptiest reply valid for the schema
  (``null`` where nullable, ``[]`` for arrays, ``false`` for booleans, ``""`` for an
  unconstrained string, objects of those), so extraction extracts nothing. A schema
  that needs a real value (a number, an enum, a constant, a non-empty array, a
  constrained string) raises :class:`StandInUnsupported` (``stand-in-unsupported``),
  as does a request without a schema.

Content words: the lower-cased runs of letters and digits (``[^\\W_]+``), minus a
small English stop-word list (:data:`STOP_WORDS`) and single letters; a word of
four or more letters ending in one ``s`` loses it, so ``pictures`` meets
``picture``. Nothing else is stemmed, and no synonym is known.

Sentences: an item's text is cut after a run of ``.``, ``!``, ``?`` or ``…`` (with
any closing quotes or brackets) that is followed by whitespace, and at blank lines;
each piece is trimmed of whitespace. Abbreviations such as ``Dr.`` therefore end a
sentence. A sentence with more than two elision marks is skipped, because a quote
with more than two elisions is never located.

It never calls a network, keeps every request in :attr:`calls`, and reports no usage.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator
from typing import Any, Final

from graphrag_orm.chat.base import DEFAULT_KEPT_CALLS, CallLog, ChatChunk, ChatReply, ChatRequest
from graphrag_orm.chat.evidence_block import (
    ANSWER_SCHEMA_NAME,
    REWRITE_SCHEMA_NAME,
    EvidenceBlockError,
    parse_evidence,
    parse_question,
)
from graphrag_orm.chat.scripted import STREAM_PIECE
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import StandInUnsupported

__all__ = ["STOP_WORDS", "ExtractiveChat", "StandInUnsupported", "content_words", "sentences"]

_STOP_WORDS_TEXT: Final = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom whose why will
    with would you your yours yourself yourselves
"""
STOP_WORDS: Final = frozenset(_STOP_WORDS_TEXT.split())
"""Words that carry no topic: pronouns, articles, auxiliaries, prepositions, question words."""

_WORD: Final = re.compile(r"[^\W_]+")
_BOUNDARY: Final = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s)|\n[^\S\n]*\n")
_ELISIONS: Final = re.compile(r"\.\.\.|…")


def content_words(text: str) -> set[str]:
    """The content words of ``text`` under the module's rules."""
    words: set[str] = set()
    for token in _WORD.findall(text.lower()):
        if token in STOP_WORDS or (len(token) == 1 and not token.isdigit()):
            continue
        if len(token) >= 4 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        words.add(token)
    return words


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order, each a verbatim, trimmed substring of it."""
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        pieces.append(text[start : match.end()])
        start = match.end()
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


class ExtractiveChat:
    """The offline answering stand-in described in the module docstring; never a model."""

    is_stand_in = True
    label = "ExtractiveChat (offline stand-in: quotes evidence, no model)"
    model = "extractive-stand-in"

    def __init__(self, *, keep_calls: int = DEFAULT_KEPT_CALLS) -> None:
        self._log = CallLog(keep_calls)

    @property
    def calls(self) -> list[ChatRequest]:
        """The latest ``keep_calls`` requests (100 by default, at most 10,000), oldest first."""
        return self._log.recent()

    @property
    def call_count(self) -> int:
        """How many requests this client has received in all."""
        return self._log.count

    async def complete(self, request: ChatRequest) -> ChatReply:
        """The reply to ``request``; raises :class:`StandInUnsupported` as the module states."""
        self._log.add(request)
        return ChatReply(text=self._reply_text(request), usage=None, finish_reason="stop", model=self.model)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        """The same reply in pieces of seven characters, then a last chunk with the whole reply;
        control goes to the event loop before each chunk, as a network stream's would."""
        reply = await self.complete(request)
        for start in range(0, len(reply.text), STREAM_PIECE):
            await asyncio.sleep(0)
            yield ChatChunk(delta=reply.text[start : start + STREAM_PIECE])
        await asyncio.sleep(0)
        yield ChatChunk(reply=reply)

    def _reply_text(self, request: ChatRequest) -> str:
        prompt = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        try:
            if request.schema_name == ANSWER_SCHEMA_NAME:
                return json.dumps(self._answer(parse_evidence(prompt), parse_question(prompt)), ensure_ascii=False)
            if request.schema_name == REWRITE_SCHEMA_NAME:
                return json.dumps({"question": parse_question(prompt)}, ensure_ascii=False)
        except EvidenceBlockError as error:
            raise StandInUnsupported(
                ErrorCode.STAND_IN_UNSUPPORTED,
                f"ExtractiveChat cannot read the {request.schema_name} request: {error.message}",
            ) from None
        if request.response_schema is None:
            raise StandInUnsupported(
                ErrorCode.STAND_IN_UNSUPPORTED, "ExtractiveChat replies only to requests with a schema"
            )
        schema = request.response_schema
        return json.dumps(_emptiest(schema, schema, request.schema_name), ensure_ascii=False)

    @staticmethod
    def _answer(items: list[tuple[str, str]], question: str) -> dict[str, Any]:
        wanted = content_words(question)
        need = 1 if len(wanted) == 1 else 2
        best: tuple[int, str, str] | None = None
        for chunk_id, text in items:
            for sentence in sentences(text):
                if len(_ELISIONS.findall(sentence)) > 2:
                    continue
                shared = len(wanted & content_words(sentence))
                if best is None or shared > best[0]:
                    best = (shared, chunk_id, sentence)
        if not wanted or best is None or best[0] < need:
            found = 0 if best is None else best[0]
            return {
                "answer": None,
                "citations": None,
                "insufficient": (
                    f"no evidence sentence shares {need} content word{'s' if need > 1 else ''} with the question "
                    f"(best: {found}); ExtractiveChat is an offline stand-in that only quotes evidence"
                ),
            }
        _shared, chunk_id, sentence = best
        return {"answer": sentence, "citations": [{"chunkId": chunk_id, "quote": sentence}], "insufficient": None}


def _unsupported(schema_name: str, what: str) -> StandInUnsupported:
    return StandInUnsupported(
        ErrorCode.STAND_IN_UNSUPPORTED, f"ExtractiveChat cannot reply validly to schema {schema_name!r}: {what}"
    )


def _emptiest(schema: Any, root: dict[str, Any], name: str, depth: int = 0) -> Any:
    """The emptiest value valid for ``schema`` (a JSON schema); local ``$ref``s are followed."""
    if depth > 32:
        raise _unsupported(name, "the schema nests deeper than 32 levels")
    if not isinstance(schema, dict):
        raise _unsupported(name, "a schema node is not an object")
    if "$ref" in schema:
        return _emptiest(_resolve(schema["$ref"], root, name), root, name, depth + 1)
    if "const" in schema or "enum" in schema:
        if schema.get("const", 0) is None or None in schema.get("enum", ()):
            return None
        raise _unsupported(name, "a field needs a constant or enum value")
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = schema[key]
            if any(isinstance(b, dict) and b.get("type") == "null" for b in branches):
                return None
            return _emptiest(branches[0] if branches else None, root, name, depth + 1)
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if "null" in kinds:
        return None
    if "array" in kinds:
        if schema.get("minItems", 0) > 0:
            raise _unsupported(name, "an array needs at least one item")
        return []
    if "object" in kinds or (not kinds and "properties" in schema):
        properties = schema.get("properties", {})
        return {key: _emptiest(properties.get(key, {}), root, name, depth + 1) for key in schema.get("required", [])}
    if "boolean" in kinds:
        return False
    if "string" in kinds:
        if any(key in schema for key in ("minLength", "pattern", "format")):
            raise _unsupported(name, "a string field is constrained")
        return ""
    raise _unsupported(name, f"a field of type {kinds or 'unknown'} needs a value")


def _resolve(reference: Any, root: dict[str, Any], name: str) -> Any:
    if not isinstance(reference, str) or not reference.startswith("#/"):
        raise _unsupported(name, "only local $ref values are followed")
    node: Any = root
    for part in reference[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise _unsupported(name, f"$ref {reference} does not resolve")
        node = node[part]
    return node
