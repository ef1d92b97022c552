"""Extraction replies written by hand, as tables a sample fills in, answered per chunk.

A sample lists the things of its texts (each with the exact phrases that name it), the
facts between them and the quoted words with their speakers. :func:`reply_for` answers
an extraction request for one chunk in the reply format of API.md section 7: the things
whose phrases the chunk holds (exactly those phrases as mentions), the facts whose two
ends are both in the chunk, and the quotes whose words and speaker are in it. Phrases are
compared with whitespace runs collapsed, as the toolkit's locator compares them. The
toolkit then checks and grounds the reply exactly as it would a model's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.chat import ChatRequest

__all__ = ["Fact", "Quote", "Thing", "reply_for", "responder"]


@dataclass(frozen=True)
class Thing:
    """A thing of the texts: its kind, name, the phrases that name it, a description and aliases."""

    kind: str
    name: str
    phrases: tuple[str, ...]
    description: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fact:
    """A fact between two things (by name), given for a chunk that names both."""

    source: str
    type: str
    target: str
    role: str | None = None


@dataclass(frozen=True)
class Quote:
    """Quoted words exactly as the text has them (line breaks as spaces), one unbroken stretch."""

    speaker: str
    words: str
    addressee: str | None = None


def _flat(text: str) -> str:
    return " ".join(text.split())


def reply_for(
    passage: str, things: Sequence[Thing], facts: Sequence[Fact], quotes: Sequence[Quote], quote_type: str
) -> dict[str, Any]:
    """The reply for one chunk's text."""
    flat = _flat(passage)
    named = {thing.name: [phrase for phrase in thing.phrases if phrase in flat] for thing in things}
    present = {name for name, phrases in named.items() if phrases}
    entities = [
        {
            "kind": thing.kind,
            "name": thing.name,
            "aliases": list(thing.aliases),
            "description": thing.description,
            "mentions": named[thing.name],
        }
        for thing in things
        if thing.name in present
    ]
    relationships = [
        {"type": f.type, "source": f.source, "target": f.target, "role": f.role, "kind": None, "description": None}
        for f in facts
        if f.source in present and f.target in present
    ]
    said = [
        {"type": quote_type, "speaker": q.speaker, "addressee": q.addressee, "quote": q.words}
        for q in quotes
        if q.speaker in present and _flat(q.words) in flat
    ]
    return {"entities": entities, "relationships": relationships, "quotes": said}


def responder(
    things: Sequence[Thing], facts: Sequence[Fact], quotes: Sequence[Quote], quote_type: str
) -> Callable[[ChatRequest], str]:
    """A ``ScriptedChat`` responder answering each extraction request with :func:`reply_for` its chunk."""

    def reply(request: ChatRequest) -> str:
        passage = request.messages[1].content.removeprefix("Passage:\n")
        return json.dumps(reply_for(passage, things, facts, quotes, quote_type))

    return reply
