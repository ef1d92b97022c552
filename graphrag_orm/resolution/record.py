"""A merge's run record: what it changed and what it left, as one JSON string on its run node.

A merge is recorded as an ``IngestionRun`` node (no schema change): its
``settingsFingerprint`` is ``merge:`` and the ontology's fingerprint, its status
Completed (Undone once undone), and its ``mergeRecord`` property holds this record:

- the merged thing: labels and every property (to recreate it);
- the kept thing's properties before and after (its aliases grew);
- every mention and quote moved (type, chunk id, every property; the ``key`` is kept);
- every fact of the merged thing as it was (type, direction, other end's kind and id, every
  property), the facts the merge created on the kept thing and the facts it unioned into
  (before and after), so undo can check nothing was written since and put everything back.

Properties are JSON values, or Neo4j dates and times written with a tag; a value that does
not come back equal from JSON (a point, a byte array, a time zone JSON cannot hold) makes
the merge fail rather than record it inexactly (:func:`check_exact`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import neo4j.time

__all__ = ["FORMAT", "FactRecord", "LinkRecord", "MergeRecord", "UnionRecord", "check_exact"]

FORMAT = "graphrag-orm-merge/1"
#: A run's ``settingsFingerprint`` starts with this when it is a merge.
MERGE_PREFIX = "merge:"

_TEMPORAL: dict[str, Any] = {
    "DateTime": neo4j.time.DateTime,
    "Date": neo4j.time.Date,
    "Time": neo4j.time.Time,
}


@dataclass(frozen=True)
class LinkRecord:
    """A mention or quote moved from the merged thing to the kept thing."""

    type: str
    chunk: str
    props: dict[str, Any]


@dataclass(frozen=True)
class FactRecord:
    """A fact seen from one thing: ``outgoing`` from it, to ``other`` (of ``other_kind``)."""

    type: str
    outgoing: bool
    other: str
    other_kind: str
    props: dict[str, Any]

    @property
    def key(self) -> tuple[bool, str, str]:
        return (self.outgoing, self.type, self.other)


@dataclass(frozen=True)
class UnionRecord:
    """A fact of the kept thing that took in a fact of the merged thing: its properties before and after."""

    type: str
    outgoing: bool
    other: str
    other_kind: str
    before: dict[str, Any]
    after: dict[str, Any]

    @property
    def key(self) -> tuple[bool, str, str]:
        return (self.outgoing, self.type, self.other)


@dataclass(frozen=True)
class MergeRecord:
    """Everything one merge changed and left (see the module's docstring)."""

    ontology: str
    kind: str
    kept_id: str
    merged_id: str
    merged_labels: list[str]
    merged_props: dict[str, Any]
    kept_before: dict[str, Any]
    kept_after: dict[str, Any]
    links: list[LinkRecord] = field(default_factory=list)
    #: The merged thing's facts as they were (self-facts included: ``other`` is the kept or merged id).
    removed: list[FactRecord] = field(default_factory=list)
    #: Facts the merge created on the kept thing, as it left them.
    created: list[FactRecord] = field(default_factory=list)
    unioned: list[UnionRecord] = field(default_factory=list)

    def to_json(self) -> str:
        body = {"format": FORMAT, **asdict(self)}
        return json.dumps(body, default=_encode, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> MergeRecord:
        body = json.loads(text, object_hook=_decode)
        if body.pop("format", None) != FORMAT:
            raise ValueError("not a merge record")
        return cls(
            **{
                **body,
                "links": [LinkRecord(**item) for item in body["links"]],
                "removed": [FactRecord(**item) for item in body["removed"]],
                "created": [FactRecord(**item) for item in body["created"]],
                "unioned": [UnionRecord(**item) for item in body["unioned"]],
            }
        )


def _encode(value: Any) -> Any:
    for tag, kind in _TEMPORAL.items():
        if isinstance(value, kind):
            return {"$neo4j": tag, "iso": value.iso_format()}
    raise TypeError(f"a property of type {type(value).__name__} cannot be recorded")


def _decode(item: dict[str, Any]) -> Any:
    tag = item.get("$neo4j")
    if tag in _TEMPORAL and set(item) == {"$neo4j", "iso"}:
        return _TEMPORAL[tag].from_iso_format(item["iso"])
    return item


def check_exact(record: MergeRecord) -> str:
    """The record as JSON, after checking it reads back equal (raises ValueError otherwise)."""
    text = record.to_json()
    if MergeRecord.from_json(text) != record:
        raise ValueError("a property value does not read back equal from the run record")
    return text
