"""Revision files written as a hostile author would: any JSON, with the checksum computed for it.

The checksum is computed here from the raw step dictionaries (the canonical JSON the
toolkit hashes: id, predecessor and steps, keys sorted, no spaces), so a file is refused
for what it holds, never for a wrong checksum.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

FORMAT = "graphrag-orm-migration/1"


def raw_checksum(revision: Any, down_revision: Any, steps: Any) -> str:
    body = {"revision": revision, "down_revision": down_revision, "steps": steps}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def write_raw_revision(
    folder: Path,
    revision: Any,
    steps: list[Any],
    *,
    down_revision: Any = None,
    message: Any = "written by hand",
    file_name: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write a revision file holding exactly these values and a checksum that matches them."""
    folder.mkdir(parents=True, exist_ok=True)
    body = {
        "format": FORMAT,
        "revision": revision,
        "down_revision": down_revision,
        "message": message,
        "checksum": raw_checksum(revision, down_revision, steps),
        "steps": steps,
        **(extra or {}),
    }
    path = folder / (file_name or f"{revision}.json")
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    return path


def create(definition: dict[str, Any]) -> dict[str, Any]:
    return {"action": "create", "definition": definition}


def unique_constraint(**changes: Any) -> dict[str, Any]:
    return {"kind": "unique-constraint", "name": "probe_a_b_unique", "label": "ProbeA", "property": "b", **changes}


def relationship_constraint(**changes: Any) -> dict[str, Any]:
    return {
        "kind": "relationship-unique-constraint",
        "name": "probe_r_key_unique",
        "type": "PROBE_R",
        "property": "key",
        **changes,
    }


def range_index(**changes: Any) -> dict[str, Any]:
    return {"kind": "range-index", "name": "probe_a_c_index", "label": "ProbeA", "properties": ["c"], **changes}


def vector_index(**changes: Any) -> dict[str, Any]:
    return {
        "kind": "vector-index",
        "name": "probe_a_vector",
        "label": "ProbeA",
        "property": "embedding",
        "dimensions": 8,
        "similarity": "cosine",
        **changes,
    }


def fulltext_index(**changes: Any) -> dict[str, Any]:
    return {
        "kind": "fulltext-index",
        "name": "probe_a_text",
        "labels": ["ProbeA"],
        "properties": ["text"],
        "analyzer": "standard-no-stop-words",
        **changes,
    }


_INJECTED = " IF NOT EXISTS FOR (n:Injected) REQUIRE n.b IS UNIQUE //"

#: One step per field a file could inject through, each with a checksum-worthy value the
#: server would read as more than a name or an option: (field, definition).
INJECTED_FIELDS: list[tuple[str, dict[str, Any]]] = [
    ("unique-constraint name", unique_constraint(name="x" + _INJECTED)),
    ("unique-constraint label", unique_constraint(label="ProbeA) REQUIRE n.x IS UNIQUE //")),
    ("unique-constraint property", unique_constraint(property="b IS UNIQUE //")),
    ("relationship-unique-constraint name", relationship_constraint(name="r" + _INJECTED)),
    ("relationship-unique-constraint type", relationship_constraint(type="PROBE_R]-() REQUIRE r.x IS UNIQUE //")),
    ("relationship-unique-constraint property", relationship_constraint(property="key IS UNIQUE //")),
    ("range-index name", range_index(name="i FOR (n:Injected) ON (n.x) //")),
    ("range-index label", range_index(label="ProbeA) ON (n.x) //")),
    ("range-index properties", range_index(properties=["c", "x) //"])),
    ("vector-index name", vector_index(name="v FOR (n:Injected) ON (n.e) //")),
    ("vector-index label", vector_index(label="ProbeA`")),
    ("vector-index property", vector_index(property="embedding) //")),
    ("vector-index dimensions (a string)", vector_index(dimensions="8")),
    ("vector-index dimensions (a boolean)", vector_index(dimensions=True)),
    ("vector-index dimensions (out of range)", vector_index(dimensions=100_000)),
    ("vector-index similarity", vector_index(similarity="cosine'}} //")),
    ("vector-index filter property", vector_index(filter_properties=["documentId] //"])),
    ("fulltext-index name", fulltext_index(name="t FOR (n:Injected) ON EACH [n.x] //")),
    ("fulltext-index labels", fulltext_index(labels=["ProbeA", "Injected) ON EACH [n.x] //"])),
    ("fulltext-index properties", fulltext_index(properties=["text] //"])),
    ("fulltext-index analyzer", fulltext_index(analyzer="english'}} //")),
]
