"""Check, prune, ground and resolve one document's candidates; nothing pruned reaches the graph.

Per chunk, in order:

- an entity needs a known kind and a name (at most ``max_name_chars``); each of its mention
  phrases is located in the chunk with the citation locator's rules (nothing else is
  forgiven: no case folding, no fuzzy match); an entity none of whose mentions, name or
  aliases can be located is pruned as ``not-grounded``. Its stored mentions are the
  located bytes.
- a relationship's ends are entities kept from the same chunk, found by name, then alias,
  then one of their mention phrases; a relationship outside the allowed triples is kept
  flipped when its reverse is allowed (and recorded), else pruned; a self-loop is pruned.
  So a fact is kept only when both ends are grounded in the same chunk.
- a quote needs a speaker kept from the chunk, of a kind that may speak it, and words
  located in the chunk as one stretch.
- per-chunk limits prune what is over them, with the reason recorded.

Across the document's chunks, candidates for one thing (kind and normalised name) merge:
aliases are unioned and the first description in chunk order wins. A placeholder
("she", "the man") never merges: its id is its chunk and span.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from graphrag_orm.citations import locate
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.extraction.options import ExtractionOptions
from graphrag_orm.extraction.reply import EntityCandidate, QuoteCandidate, RawExtraction, RelationshipCandidate
from graphrag_orm.extraction.summary import PrunedItem, PruneReason
from graphrag_orm.ontology import Ontology, entity_id, normalize_name, placeholder_id

__all__ = [
    "DocumentKnowledge",
    "ExtractionCandidate",
    "ExtractionChunk",
    "FactDraft",
    "Grounder",
    "QuoteDraft",
    "Span",
    "ThingDraft",
    "Verifier",
]

_DETAIL_CHARS = 200


@dataclass(frozen=True)
class ExtractionChunk:
    """A chunk as extraction sees it: its id, document, text and document offset."""

    chunk_id: str
    document_id: str
    text: str
    start_byte: int

    def as_item(self) -> EvidenceItem:
        return EvidenceItem(
            chunk_id=self.chunk_id,
            document_id=self.document_id,
            source_uri="",
            text=self.text,
            start_byte=self.start_byte,
            end_byte=self.start_byte + len(self.text.encode("utf-8")),
            score=0.0,
        )


@dataclass(frozen=True)
class Span:
    """Located bytes in a chunk (document offsets) and the stored text there."""

    chunk_id: str
    start_byte: int
    end_byte: int
    quote: str


@dataclass
class ThingDraft:
    """One thing after resolution, with every located mention."""

    id: str
    kind: str
    name: str
    aliases: set[str]
    description: str | None
    is_placeholder: bool
    mentions: list[Span] = field(default_factory=list)


@dataclass(frozen=True)
class FactDraft:
    type: str
    source: str
    target: str
    source_kind: str
    target_kind: str
    payload: dict[str, str | None]


@dataclass(frozen=True)
class QuoteDraft:
    type: str
    speaker: str
    speaker_kind: str
    addressee: str | None
    span: Span


@dataclass
class DocumentKnowledge:
    """What one document's extraction keeps, ready for its write transaction."""

    things: dict[str, ThingDraft] = field(default_factory=dict)
    facts: dict[tuple[str, str, str], FactDraft] = field(default_factory=dict)
    quotes: list[QuoteDraft] = field(default_factory=list)
    pruned: list[PrunedItem] = field(default_factory=list)
    flipped: int = 0


@dataclass(frozen=True)
class ExtractionCandidate:
    """What a verifier sees: one kept item (before it is written)."""

    chunk_id: str
    item_kind: str  # "entity", "fact" or "quote"
    kind: str  # the entity kind, fact type or quote type
    name: str  # entity name, "source TYPE target", or the speaker
    text: str | None = None  # a quote's words


#: An optional hook: return a reason to refuse a candidate, or None to keep it.
Verifier = Callable[[ExtractionCandidate], Awaitable[str | None]]


def _short(text: str) -> str:
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"


class Grounder:
    """Checks candidates against one ontology and one chunk at a time."""

    def __init__(self, ontology: Ontology, options: ExtractionOptions, verifier: Verifier | None = None) -> None:
        self.ontology = ontology
        self.options = options
        self.verifier = verifier
        # The ontology's instructions give examples ("said Mara"); a weak model copies
        # their names into its reply (the 0.5B model gave "Mara" as an alias).
        examples = ontology.instructions or ""
        self._examples = ExtractionChunk("", "", examples, 0).as_item() if examples else None

    async def add_chunk(self, knowledge: DocumentKnowledge, chunk: ExtractionChunk, raw: RawExtraction) -> None:
        """Check ``raw`` against ``chunk`` and merge what is kept into ``knowledge``."""
        item = chunk.as_item()
        pruned = knowledge.pruned
        local: dict[str, ThingDraft] = {}  # resolution key -> thing, this chunk only
        # A fact's ends are found by name, then alias, then mention phrase.
        by_name: dict[str, ThingDraft] = {}
        by_alias: dict[str, ThingDraft] = {}
        by_mention: dict[str, ThingDraft] = {}
        for index, candidate in enumerate(raw.entities):
            label = f"{candidate.kind} {_short(candidate.name)}".strip()
            if index >= self.options.max_entities_per_chunk:
                pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.OVER_LIMIT))
                continue
            thing = self._entity(candidate, chunk, item, pruned)
            if thing is None:
                continue
            if self.verifier is not None:
                reason = await self.verifier(ExtractionCandidate(chunk.chunk_id, "entity", thing.kind, thing.name))
                if reason:
                    pruned.append(
                        PrunedItem(
                            chunk_id=chunk.chunk_id, item=label, reason=PruneReason.REFUSED, detail=_short(reason)
                        )
                    )
                    continue
            key = thing.id
            existing = local.get(key)
            if existing is None:
                local[key] = thing
            else:
                _merge(existing, thing)
                thing = existing
            by_name.setdefault(normalize_name(thing.name), thing)
            for alias in thing.aliases:
                by_alias.setdefault(normalize_name(alias), thing)
            for surface in (*(m.quote for m in thing.mentions), *candidate.mentions):
                by_mention.setdefault(normalize_name(surface), thing)
        names = _Names(by_name, by_alias, by_mention)
        facts = await self._facts(raw.relationships, chunk, names, knowledge)
        quotes = await self._quotes(raw.quotes, chunk, item, names, pruned)
        for thing in local.values():
            document_thing = knowledge.things.get(thing.id)
            if document_thing is None:
                knowledge.things[thing.id] = thing
            else:
                _merge(document_thing, thing)
        for fact in facts:
            knowledge.facts.setdefault((fact.type, fact.source, fact.target), fact)
        knowledge.quotes.extend(quotes)

    def _entity(
        self, candidate: EntityCandidate, chunk: ExtractionChunk, item: EvidenceItem, pruned: list[PrunedItem]
    ) -> ThingDraft | None:
        label = f"{candidate.kind} {_short(candidate.name)}".strip()
        if self.ontology.class_of(candidate.kind) is None:
            pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.UNKNOWN_KIND))
            return None
        name = " ".join(candidate.name.split())
        if not name:
            pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.MISSING_NAME))
            return None
        if len(name) > self.options.max_name_chars:
            pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.NAME_TOO_LONG))
            return None
        if self._from_the_examples(name, item):
            pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.EXAMPLE_NAME))
            return None
        spans: list[Span] = []
        for phrase in candidate.mentions[: self.options.max_mentions_per_entity]:
            # A phrase listed twice is two mentions: each takes the next free occurrence.
            span = _locate_word(item, phrase, avoid=spans)
            if span is None:
                pruned.append(
                    PrunedItem(
                        chunk_id=chunk.chunk_id,
                        item=f"mention {_short(phrase)!r} of {label}",
                        reason=PruneReason.MENTION_NOT_FOUND,
                    )
                )
            else:
                spans.append(span)
        if not spans:
            for surface in (name, *candidate.aliases):
                span = _locate_word(item, surface, avoid=spans)
                if span is not None:
                    spans.append(span)
                    break
        if not spans:
            pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.NOT_GROUNDED))
            return None
        placeholder = self.ontology.is_placeholder(name)
        thing_id = (
            placeholder_id(candidate.kind, chunk.chunk_id, spans[0].start_byte)
            if placeholder
            else entity_id(candidate.kind, name)
        )
        aliases: set[str] = set()
        for alias in candidate.aliases:
            alias = " ".join(alias.split())
            if not alias or alias == name:
                continue
            # An alias is stored and searched by name, so it must be in the passage too.
            if len(alias) > self.options.max_name_chars or _locate_word(item, alias, avoid=[]) is None:
                pruned.append(
                    PrunedItem(
                        chunk_id=chunk.chunk_id,
                        item=f"alias {_short(alias)!r} of {label}",
                        reason=PruneReason.ALIAS_NOT_FOUND,
                    )
                )
                continue
            aliases.add(alias)
        description = " ".join(candidate.description.split()) if candidate.description else None
        return ThingDraft(thing_id, candidate.kind, name, aliases, description or None, placeholder, spans)

    def _from_the_examples(self, name: str, item: EvidenceItem) -> bool:
        """Whether ``name`` is in the instructions' examples and not in the passage (a placeholder never is)."""
        if self._examples is None or self.ontology.is_placeholder(name):
            return False
        if _locate_word(self._examples, name, avoid=[]) is None:
            return False
        return _locate_word(item, name, avoid=[]) is None

    async def _facts(
        self,
        candidates: Sequence[RelationshipCandidate],
        chunk: ExtractionChunk,
        names: _Names,
        knowledge: DocumentKnowledge,
    ) -> list[FactDraft]:
        kept: list[FactDraft] = []
        for index, candidate in enumerate(candidates):
            label = f"{_short(candidate.source)} {candidate.type} {_short(candidate.target)}"
            if index >= self.options.max_relationships_per_chunk:
                knowledge.pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.OVER_LIMIT))
                continue
            source = names.find(candidate.source)
            target = names.find(candidate.target)
            if source is None or target is None:
                missing = candidate.source if source is None else candidate.target
                knowledge.pruned.append(
                    PrunedItem(
                        chunk_id=chunk.chunk_id,
                        item=label,
                        reason=PruneReason.UNKNOWN_END,
                        detail=f"no grounded entity named {_short(missing)!r} in this chunk",
                    )
                )
                continue
            if source.id == target.id:
                knowledge.pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.SELF_LOOP))
                continue
            if not self.ontology.allows(source.kind, candidate.type, target.kind):
                if self.ontology.allows(target.kind, candidate.type, source.kind):
                    source, target = target, source
                    knowledge.flipped += 1
                else:
                    knowledge.pruned.append(
                        PrunedItem(
                            chunk_id=chunk.chunk_id,
                            item=label,
                            reason=PruneReason.NOT_ALLOWED,
                            detail=f"({source.kind})-[{_short(candidate.type)}]->({target.kind}) is not allowed",
                        )
                    )
                    continue
            fact = FactDraft(candidate.type, source.id, target.id, source.kind, target.kind, dict(candidate.payload))
            if self.verifier is not None:
                reason = await self.verifier(
                    ExtractionCandidate(chunk.chunk_id, "fact", fact.type, f"{source.name} {fact.type} {target.name}")
                )
                if reason:
                    knowledge.pruned.append(
                        PrunedItem(
                            chunk_id=chunk.chunk_id, item=label, reason=PruneReason.REFUSED, detail=_short(reason)
                        )
                    )
                    continue
            kept.append(fact)
        return kept

    async def _quotes(
        self,
        candidates: Sequence[QuoteCandidate],
        chunk: ExtractionChunk,
        item: EvidenceItem,
        names: _Names,
        pruned: list[PrunedItem],
    ) -> list[QuoteDraft]:
        kept: list[QuoteDraft] = []
        for index, candidate in enumerate(candidates):
            label = f"{candidate.type} by {_short(candidate.speaker)}"
            if index >= self.options.max_quotes_per_chunk:
                pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.OVER_LIMIT))
                continue
            speaker = names.find(candidate.speaker)
            if speaker is None:
                pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.UNKNOWN_SPEAKER))
                continue
            if not self.ontology.may_speak(candidate.type, speaker.kind):
                pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.NOT_A_SPEAKER))
                continue
            span = _locate(item, candidate.quote)
            if span is None:
                pruned.append(PrunedItem(chunk_id=chunk.chunk_id, item=label, reason=PruneReason.QUOTE_NOT_FOUND))
                continue
            if self.verifier is not None:
                reason = await self.verifier(
                    ExtractionCandidate(chunk.chunk_id, "quote", candidate.type, speaker.name, span.quote)
                )
                if reason:
                    pruned.append(
                        PrunedItem(
                            chunk_id=chunk.chunk_id, item=label, reason=PruneReason.REFUSED, detail=_short(reason)
                        )
                    )
                    continue
            addressee = " ".join(candidate.addressee.split()) if candidate.addressee else None
            kept.append(QuoteDraft(candidate.type, speaker.id, speaker.kind, addressee or None, span))
        return kept


@dataclass(frozen=True)
class _Names:
    """How a relationship or quote names a thing of its chunk: by name, then alias, then mention."""

    by_name: dict[str, ThingDraft]
    by_alias: dict[str, ThingDraft]
    by_mention: dict[str, ThingDraft]

    def find(self, text: str) -> ThingDraft | None:
        key = normalize_name(text)
        return self.by_name.get(key) or self.by_alias.get(key) or self.by_mention.get(key)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _locate_word(item: EvidenceItem, phrase: str, avoid: list[Span]) -> Span | None:
    """The first occurrence of ``phrase`` at word boundaries that starts where none of ``avoid`` does.

    "he" is never found inside "The", and "Mara" listed after "Mara Vell" takes the next
    "Mara" rather than the start of "Mara Vell".
    """
    text = item.text
    encoded = text.encode("utf-8")
    offset = 0  # characters of item.text already passed
    while offset < len(text):
        head = text[:offset].encode("utf-8")
        rest = item.model_copy(update={"text": text[offset:], "start_byte": item.start_byte + len(head)})
        span = _locate(rest, phrase)
        if span is None:
            return None
        start = span.start_byte - item.start_byte
        end = span.end_byte - item.start_byte
        first = len(encoded[:start].decode("utf-8"))
        last = len(encoded[:end].decode("utf-8"))
        starts_word = first == 0 or not _is_word_char(text[first - 1]) or not _is_word_char(text[first])
        ends_word = last >= len(text) or not _is_word_char(text[last]) or not _is_word_char(text[last - 1])
        # A mention is keyed by its start: one that starts where another does is a repeat.
        taken = any(a.start_byte == span.start_byte for a in avoid)
        if starts_word and ends_word and not taken:
            return Span(item.chunk_id, span.start_byte, span.end_byte, span.quote)
        offset = first + 1
    return None


def _locate(item: EvidenceItem, phrase: str) -> Span | None:
    # Elisions are not accepted in a mention or quote: it must be one unbroken stretch.
    if "..." in phrase or "…" in phrase:
        return None
    citation = locate(item, phrase)
    if citation is None:
        return None
    return Span(item.chunk_id, citation.start_byte, citation.end_byte, citation.quote)


def _merge(into: ThingDraft, other: ThingDraft) -> None:
    """Merge ``other`` into ``into``: aliases unioned, the first description kept, mentions added."""
    # Another spelling of the same normalised name adds nothing a case-insensitive index lacks.
    if normalize_name(other.name) != normalize_name(into.name):
        into.aliases.add(other.name)
    into.aliases |= other.aliases
    into.aliases.discard(into.name)
    if into.description is None:
        into.description = other.description
    known = {(m.chunk_id, m.start_byte, m.end_byte) for m in into.mentions}
    into.mentions.extend(m for m in other.mentions if (m.chunk_id, m.start_byte, m.end_byte) not in known)
