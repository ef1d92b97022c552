"""ExtractiveChat: the offline stand-in that answers by quoting one evidence sentence.

It is not a model and is labelled as a stand-in wherever its output is shown
(:attr:`ExtractiveChat.label`, ``model == "extractive-stand-in"``). It exists so the
answer path (prompt, reply format, citation checks, streaming, export) runs end to
end with no model and no network.

What it does with a request, by ``schema_name``:

- ``"answer"``: reads the evidence block and the question block of the last user
  message (:mod:`graphrag_orm.chat.evidence_block`), splits every evidence item
  into sentences and picks one (below). It replies ``{"answer": <sentence> + NO_MODEL_NOTE,
  "citations": [{"chunkId": <item>, "quote": <sentence>}], "insufficient": null}``:
  the quote is the sentence copied verbatim from the item, so its citation always
  locates, and the answer says that no model wrote it (:data:`NO_MODEL_NOTE`). When
  no sentence is good enough, or the question has no content word, it replies
  ``{"answer": null, "citations": null, "insufficient": "..."}``.

  *With an embedder* (``ExtractiveChat(embedder=...)``): every sentence that is not
  a Markdown heading is scored from 0 to 1 as the mean of two parts: the share of
  the question's content words it holds, each word weighted by how rare it is among
  the evidence's sentences (a word of the sentence's nearest heading above it counts
  half; link targets and URLs are not words of it), and the cosine similarity of the question's and the sentence's embeddings
  (the sentence embedded after its heading, so "The default is 88." is read under
  the heading that says what it is the default of). The best score wins (ties: the
  earlier item, then the earlier sentence); below ``floor`` (:data:`ANSWER_FLOOR`,
  0.45, from 0 to 1) it refuses. One embedding call per answer.

  *Without one* it picks the sentence sharing the most *content words* with the
  question; ties go to the earlier item, then the earlier sentence. When the best
  sentence shares fewer than **two** content words with the question (**one** when
  the question has only one content word), it refuses.
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
import math
import re
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

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
from graphrag_orm.errors import ConfigurationError, StandInUnsupported

if TYPE_CHECKING:
    from graphrag_orm.embeddings.base import Embedder

__all__ = [
    "ANSWER_FLOOR",
    "NO_MODEL_NOTE",
    "STOP_WORDS",
    "ExtractiveChat",
    "StandInUnsupported",
    "content_words",
    "sentences",
]

#: Said on every answer the stand-in gives, after the quoted sentence.
NO_MODEL_NOTE: Final = "(quoted from the evidence by the offline stand-in: no model wrote this answer)"

#: The least score (0..1) a sentence needs to be quoted when an embedder scores it too.
ANSWER_FLOOR: Final = 0.45

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
# A Markdown link's target and a bare URL: addresses, not prose (scored without them).
_ADDRESSES: Final = re.compile(r"(?<=\])\([^)\s]*\)|https?://\S+")


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


@dataclass(frozen=True)
class _Candidate:
    """A sentence that may be quoted: its item, its text and the nearest heading above it."""

    chunk_id: str
    sentence: str
    heading: str


def _candidates(items: list[tuple[str, str]]) -> list[_Candidate]:
    """Every quotable sentence of the evidence, in order; a heading is context, never an answer."""
    found: list[_Candidate] = []
    for chunk_id, text in items:
        heading = ""
        for sentence in sentences(text):
            if sentence.startswith("#"):
                heading = sentence.lstrip("#").strip()
            elif len(_ELISIONS.findall(sentence)) <= 2:
                found.append(_Candidate(chunk_id, sentence, heading))
    return found


def _prose(text: str) -> str:
    """``text`` without link targets and URLs: what a sentence says, not where it points."""
    return _ADDRESSES.sub("", text)


def _word_shares(wanted: set[str], found: list[_Candidate]) -> list[float]:
    """Each candidate's weighted share (0..1) of the question's content words: rarer words weigh more."""
    words = [(content_words(_prose(c.sentence)), content_words(_prose(c.heading))) for c in found]
    weight = {w: 1.0 + math.log((1 + len(found)) / (1 + sum(w in own for own, _ in words))) for w in wanted}
    total = sum(weight.values())
    return [
        sum(weight[w] if w in own else weight[w] / 2 if w in heading else 0.0 for w in wanted) / total
        for own, heading in words
    ]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return 0.0 if norms == 0 else sum(x * y for x, y in zip(a, b, strict=True)) / norms


def _refusal(why: str) -> dict[str, Any]:
    return {
        "answer": None,
        "citations": None,
        "insufficient": f"{why}; ExtractiveChat is an offline stand-in that only quotes evidence",
    }


def _quoted(chunk_id: str, sentence: str) -> dict[str, Any]:
    return {
        "answer": f"{sentence}\n\n{NO_MODEL_NOTE}",
        "citations": [{"chunkId": chunk_id, "quote": sentence}],
        "insufficient": None,
    }


class ExtractiveChat:
    """The offline answering stand-in described in the module docstring; never a model."""

    is_stand_in = True
    label = "ExtractiveChat (offline stand-in: quotes evidence, no model)"
    model = "extractive-stand-in"

    def __init__(
        self, *, keep_calls: int = DEFAULT_KEPT_CALLS, embedder: Embedder | None = None, floor: float = ANSWER_FLOOR
    ) -> None:
        if not 0.0 <= floor <= 1.0:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"floor must be from 0 to 1, not {floor!r}")
        self._log = CallLog(keep_calls)
        self.embedder = embedder
        self.floor = floor

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
        return ChatReply(text=await self._reply_text(request), usage=None, finish_reason="stop", model=self.model)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        """The same reply in pieces of seven characters, then a last chunk with the whole reply;
        control goes to the event loop before each chunk, as a network stream's would."""
        reply = await self.complete(request)
        for start in range(0, len(reply.text), STREAM_PIECE):
            await asyncio.sleep(0)
            yield ChatChunk(delta=reply.text[start : start + STREAM_PIECE])
        await asyncio.sleep(0)
        yield ChatChunk(reply=reply)

    async def _reply_text(self, request: ChatRequest) -> str:
        prompt = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
        try:
            if request.schema_name == ANSWER_SCHEMA_NAME:
                items, question = parse_evidence(prompt), parse_question(prompt)
                if self.embedder is None:
                    return json.dumps(self._by_words(items, question), ensure_ascii=False)
                return json.dumps(await self._by_scores(items, question, self.embedder), ensure_ascii=False)
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

    async def _by_scores(self, items: list[tuple[str, str]], question: str, embedder: Embedder) -> dict[str, Any]:
        """The sentence with the best mean of weighted word share and embedding similarity, above the floor."""
        wanted = content_words(question)
        found = _candidates(items)
        if not wanted or not found:
            return _refusal("the question has no content word" if not wanted else "the evidence has no sentence")
        vectors = await embedder.embed([question, *(_prose(f"{c.heading}\n{c.sentence}").strip() for c in found)])
        asked = vectors[0]
        scores = [
            (share + max(0.0, _cosine(asked, vector))) / 2
            for share, vector in zip(_word_shares(wanted, found), vectors[1:], strict=True)
        ]
        best = max(range(len(found)), key=lambda index: (scores[index], -index))
        if scores[best] < self.floor:
            return _refusal(f"no evidence sentence scores {self.floor:.2f} (best: {scores[best]:.2f})")
        return _quoted(found[best].chunk_id, found[best].sentence)

    @staticmethod
    def _by_words(items: list[tuple[str, str]], question: str) -> dict[str, Any]:
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
            return _refusal(
                f"no evidence sentence shares {need} content word{'s' if need > 1 else ''} with the question "
                f"(best: {found})"
            )
        _shared, chunk_id, sentence = best
        return _quoted(chunk_id, sentence)


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
