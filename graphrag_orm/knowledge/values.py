"""What the knowledge reads return: things found by name and a thing's facts, with the limits reached."""

from __future__ import annotations

from graphrag_orm.values import Limit, Value

__all__ = ["FactFound", "FactsFound", "ThingFound", "ThingsFound"]


class ThingFound(Value):
    """A thing whose name or alias matched, with its most specific kind and the index's score."""

    thing_id: str
    kind: str
    name: str
    aliases: tuple[str, ...] = ()
    description: str | None = None
    score: float


class ThingsFound(Value):
    things: tuple[ThingFound, ...] = ()
    limits_reached: tuple[Limit, ...] = ()


class FactFound(Value):
    """One fact of a thing, either direction, and the documents (inside the scope) that state it."""

    type: str
    source_id: str
    source_name: str
    target_id: str
    target_name: str
    document_ids: tuple[str, ...] = ()


class FactsFound(Value):
    """A thing's facts; ``found`` is False when no thing has the id."""

    thing_id: str
    found: bool
    facts: tuple[FactFound, ...] = ()
    limits_reached: tuple[Limit, ...] = ()
