"""What the extraction model is asked for: a strict JSON schema and instructions, from an ontology.

The schema meets strict structured output's rules: every object is closed and lists
all its fields as required, and the fields a reply may leave out are nullable. Both
are deterministic, so recorded calls replay and the fingerprint is stable.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from graphrag_orm.chat.endpoint import nullable
from graphrag_orm.ontology.entities import kind_description
from graphrag_orm.ontology.ontology import Ontology

__all__ = ["EXTRACTOR_VERSION", "ItemBounds", "ModelSchema"]

#: Changes to the rules below change every fingerprint, so stored documents are re-extracted.
EXTRACTOR_VERSION = "graphrag-orm-extract/1"

_RULES = """\
Extract from the passage only what it states.
- entities: each thing of one of the kinds below that the passage names. "name" is its most complete name in the passage; "aliases" are other names the passage uses for it; "description" is one short sentence from what the passage says, or null; "mentions" are phrases copied exactly from the passage (same letters, same case) that name the thing.
- relationships: facts the passage states between two of your entities, using only the allowed patterns; "source" and "target" are entity names exactly as you wrote them in "entities".
- Do not guess, do not use outside knowledge, and do not add facts the passage does not state.
- A pronoun or a vague reference ("she", "the man", "someone") is not a name: list it only when the passage never names that thing, and then use the phrase as written.
"""

_QUOTE_RULES = """\
- quotes: words a speaker says in the passage, copied exactly as one unbroken stretch; when narration interrupts speech, give each part as a quote of its own. "speaker" is an entity name you listed; "addressee" is the name of who is spoken to, or null.
"""


def _nullable(kind: str) -> dict[str, Any]:
    return nullable({"type": kind})


@dataclass(frozen=True)
class ItemBounds:
    """The most items a reply may list per array (``maxItems``): a weak model caught in a
    repetition loop stops at them instead of writing to its output limit."""

    entities: int
    relationships: int
    quotes: int
    names: int
    """Aliases and mentions of one entity."""


@dataclass(frozen=True)
class ModelSchema:
    """The extraction request's schema and instructions for one ontology; ``bounds`` adds ``maxItems``."""

    ontology: Ontology
    bounds: ItemBounds | None = None

    @classmethod
    def from_ontology(cls, ontology: Ontology, bounds: ItemBounds | None = None) -> ModelSchema:
        return cls(ontology, bounds)

    def _array(self, items: dict[str, Any], bound: str) -> dict[str, Any]:
        array: dict[str, Any] = {"type": "array", "items": items}
        if self.bounds is not None:
            array["maxItems"] = getattr(self.bounds, bound)
        return array

    def to_json_schema(self) -> dict[str, Any]:
        """A closed JSON schema: entities, relationships (and quotes when the ontology has any)."""
        onto = self.ontology
        entity = {
            "type": "object",
            "additionalProperties": False,
            "required": ["kind", "name", "aliases", "description", "mentions"],
            "properties": {
                "kind": {"type": "string", "enum": list(onto.kinds)},
                "name": {"type": "string"},
                "aliases": self._array({"type": "string"}, "names"),
                "description": _nullable("string"),
                "mentions": self._array({"type": "string"}, "names"),
            },
        }
        relationship_props: dict[str, Any] = {
            "type": {"type": "string", "enum": list(onto.fact_types) or ["NONE"]},
            "source": {"type": "string"},
            "target": {"type": "string"},
        }
        for payload in onto.fact_payload:
            relationship_props[payload] = _nullable("string")
        relationship = {
            "type": "object",
            "additionalProperties": False,
            "required": list(relationship_props),
            "properties": relationship_props,
        }
        properties: dict[str, Any] = {
            "entities": self._array(entity, "entities"),
            "relationships": self._array(relationship, "relationships"),
        }
        if onto.quote_types:
            quote = {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "speaker", "addressee", "quote"],
                "properties": {
                    "type": {"type": "string", "enum": list(onto.quote_types)},
                    "speaker": {"type": "string"},
                    "addressee": _nullable("string"),
                    "quote": {"type": "string"},
                },
            }
            properties["quotes"] = self._array(quote, "quotes")
        return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}

    def to_prompt_text(self) -> str:
        """The instructions: rules, kinds with their descriptions, allowed patterns, quotes."""
        onto = self.ontology
        lines = [_RULES.rstrip(), ""]
        if onto.quote_types:
            lines.insert(1, _QUOTE_RULES.rstrip())
        lines.append("Kinds:")
        for kind in onto.kinds:
            cls = onto.class_of(kind)
            text = kind_description(cls) if cls is not None else ""
            lines.append(f"- {kind}" + (f": {text}" if text else ""))
        lines.append("")
        lines.append("Allowed relationships (source kind, type, target kind):")
        for fact in onto.facts:
            lines.append(f"- ({fact.source})-[{fact.type}]->({fact.target})")
        if onto.quote_types:
            lines.append("")
            lines.append("Quote types:")
            for quote in onto.quotes:
                lines.append(f"- {quote.type}, spoken by: {', '.join(quote.speakers)}")
        if onto.instructions:
            lines.extend(["", onto.instructions])
        return "\n".join(lines) + "\n"

    @property
    def fingerprint(self) -> str:
        body = json.dumps(
            {"schema": self.to_json_schema(), "prompt": self.to_prompt_text(), "version": EXTRACTOR_VERSION},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(body.encode("utf-8")).hexdigest()
