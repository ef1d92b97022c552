"""Suggestions: which things of one class are probably one (pure; the reads are in the service).

A name is read as :func:`resolution_key` reads it: :func:`~graphrag_orm.ontology.normalize_name`
(NFC, case-folded, whitespace runs collapsed), then a leading "the", "a" or "an" dropped.
Two things of one class are grouped when their names read the same (``same-name``) or one's
name reads as one of the other's aliases (``alias``); groups are closed under both rules.
Placeholders are never grouped. Names that only contain another ("Mouse", "Dormouse") are
not grouped: containment is mixed in real text, so it is left to a person.

Within a group the thing with the most mentions is kept, ties going to the smallest id; every
other member is one suggestion to merge into it. The order is stable: the ontology's class
order, then the kept thing's name and id, then the merged thing's name and id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from graphrag_orm.ontology import normalize_name
from graphrag_orm.resolution.values import Suggestion, SuggestionRule, ThingRef

__all__ = ["MergeCandidate", "resolution_key", "suggest_within"]

_ARTICLES = ("the ", "a ", "an ")


def resolution_key(name: str) -> str:
    """``normalize_name`` without one leading article: "The  Caterpillar" -> "caterpillar"."""
    key = normalize_name(name)
    for article in _ARTICLES:
        if key.startswith(article) and len(key) > len(article):
            return key[len(article) :]
    return key


@dataclass(frozen=True)
class MergeCandidate:
    """One thing as read for suggestions."""

    id: str
    name: str
    aliases: tuple[str, ...]
    placeholder: bool
    mentions: int

    def ref(self) -> ThingRef:
        return ThingRef(id=self.id, name=self.name, aliases=self.aliases, mentions=self.mentions)


class _Groups:
    """Union-find over candidate ids."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.parent = {id_: id_ for id_ in ids}

    def find(self, id_: str) -> str:
        while self.parent[id_] != id_:
            self.parent[id_] = self.parent[self.parent[id_]]
            id_ = self.parent[id_]
        return id_

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def suggest_within(kind: str, things: Sequence[MergeCandidate]) -> list[Suggestion]:
    """The suggestions among the things of one class, in a stable order."""
    # Two nodes with one id only exist without the ontology's uniqueness constraints: one is read.
    unique = {thing.id: thing for thing in reversed(things)}
    candidates = [thing for thing in unique.values() if not thing.placeholder]
    groups = _Groups(thing.id for thing in candidates)
    by_name: dict[str, list[str]] = {}
    for thing in candidates:
        by_name.setdefault(resolution_key(thing.name), []).append(thing.id)
    for ids in by_name.values():
        for other in ids[1:]:
            groups.join(ids[0], other)
    for thing in candidates:
        for alias in thing.aliases:
            for other in by_name.get(resolution_key(alias), ()):
                if other != thing.id:
                    groups.join(thing.id, other)
    members: dict[str, list[MergeCandidate]] = {}
    for thing in candidates:
        members.setdefault(groups.find(thing.id), []).append(thing)
    found: list[Suggestion] = []
    for group in members.values():
        if len(group) < 2:
            continue
        kept = min(group, key=lambda t: (-t.mentions, t.id))
        for merged in group:
            if merged is kept:
                continue
            same = resolution_key(merged.name) == resolution_key(kept.name)
            rule = SuggestionRule.SAME_NAME if same else SuggestionRule.ALIAS
            found.append(Suggestion(kind=kind, rule=rule, kept=kept.ref(), merged=merged.ref()))
    found.sort(key=lambda s: (normalize_name(s.kept.name), s.kept.id, normalize_name(s.merged.name), s.merged.id))
    return found
