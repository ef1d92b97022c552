"""The harbour sample's ontology and its extraction replies (written by hand, not by a model).

``log/`` holds 32 short pages of fiction written for this project: the logs, notices and
trade notes of three coastal fleets (north, south and east), each ship calling at its
ports, owned by its trading house and carrying its cargo, with one crossing between two
fleets, and pages that state no fact (tides, weather, customs). The replies below are what a
careful extraction model returns for each page; the toolkit checks and grounds them
exactly as it would a model's reply. It is the sample of community reports
(docs/global-questions.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphrag_orm.chat import ChatRequest
from graphrag_orm.ontology import Entity, Ontology

LOG = Path(__file__).resolve().parent / "log"


class Ship(Entity):
    """A trading ship, named as in its log (the Gannet is "Gannet")."""


class Port(Entity):
    """A harbour or quay where ships call."""


class Merchant(Entity):
    """A trading house that owns ships."""


class Cargo(Entity):
    """A kind of goods a ship carries."""


FLEET = Ontology.custom(
    name="fleet",
    entities=[Ship, Port, Merchant, Cargo],
    facts=[
        (Ship, "CALLS_AT", Port),
        (Ship, "OWNED_BY", Merchant),
        (Ship, "CARRIES", Cargo),
        (Merchant, "BASED_IN", Port),
    ],
    placeholders=["she", "her", "it"],
)

_KINDS = {
    "CALLS_AT": ("Ship", "Port"),
    "OWNED_BY": ("Ship", "Merchant"),
    "CARRIES": ("Ship", "Cargo"),
    "BASED_IN": ("Merchant", "Port"),
}

#: Per page heading, its facts as (source, type, target), each end named as the page names it.
FACTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "# Log of the Gannet": (
        ("Gannet", "CALLS_AT", "Port Vell"),
        ("Gannet", "CARRIES", "salt cod"),
        ("Gannet", "OWNED_BY", "House Orrin"),
    ),
    "# Log of the Petrel": (("Petrel", "CALLS_AT", "Brinmoor"), ("Petrel", "CARRIES", "whale oil")),
    "# Log of the Skua": (("Skua", "CALLS_AT", "Port Vell"), ("Skua", "OWNED_BY", "House Orrin")),
    "# House Orrin": (("House Orrin", "BASED_IN", "Port Vell"),),
    "# Notice from the Brinmoor harbourmaster": (("Petrel", "OWNED_BY", "House Orrin"),),
    "# Whale oil prices": (("Skua", "CARRIES", "whale oil"),),
    "# The salt cod trade": (("Gannet", "CARRIES", "salt cod"), ("Petrel", "CALLS_AT", "Port Vell")),
    "# Log of the Heron": (("Heron", "CALLS_AT", "Saltmere"), ("Heron", "CARRIES", "indigo")),
    "# Log of the Egret": (("Egret", "CALLS_AT", "Calder Bay"), ("Egret", "OWNED_BY", "Velde & Daughters")),
    "# Log of the Ibis": (("Ibis", "CALLS_AT", "Saltmere"), ("Ibis", "CARRIES", "raisins")),
    "# Velde & Daughters": (("Velde & Daughters", "BASED_IN", "Saltmere"),),
    "# Notice from Calder Bay": (("Heron", "OWNED_BY", "Velde & Daughters"),),
    "# The indigo trade": (("Egret", "CARRIES", "indigo"),),
    "# The raisin harvest": (("Heron", "CALLS_AT", "Calder Bay"), ("Ibis", "OWNED_BY", "Velde & Daughters")),
    "# Log of the Corran": (("Corran", "CALLS_AT", "Tarn Quay"), ("Corran", "CARRIES", "timber")),
    "# Log of the Merrow": (("Merrow", "CALLS_AT", "Olmond"), ("Merrow", "OWNED_BY", "Ashgrove Company")),
    "# Log of the Selkie": (("Selkie", "CALLS_AT", "Tarn Quay"), ("Selkie", "CARRIES", "tar")),
    "# The Ashgrove Company": (("Ashgrove Company", "BASED_IN", "Tarn Quay"),),
    "# Notice from Olmond": (("Corran", "OWNED_BY", "Ashgrove Company"),),
    "# The tar trade": (("Merrow", "CARRIES", "tar"),),
    "# The timber trade": (("Selkie", "OWNED_BY", "Ashgrove Company"), ("Selkie", "CALLS_AT", "Olmond")),
    "# A crossing of trades": (("Gannet", "CALLS_AT", "Saltmere"),),
}


def reply_for(heading: str) -> dict[str, Any]:
    """The hand-written extraction reply for the page under ``heading`` (nothing for a page without facts)."""
    facts = FACTS.get(heading, ())
    entities: dict[str, dict[str, Any]] = {}
    for source, fact_type, target in facts:
        for kind, name in zip(_KINDS[fact_type], (source, target), strict=True):
            entities.setdefault(
                name, {"kind": kind, "name": name, "aliases": [], "description": None, "mentions": [name]}
            )
    relationships = [
        {"type": t, "source": s, "target": o, "role": None, "kind": None, "description": None} for s, t, o in facts
    ]
    return {"entities": list(entities.values()), "relationships": relationships}


def extraction_reply(request: ChatRequest) -> str:
    """The hand-written reply for the page an extraction request carries."""
    passage = request.messages[1].content.removeprefix("Passage:\n")
    return json.dumps(reply_for(passage.split("\n", 1)[0].strip()))


def pages() -> list[Path]:
    """The sample's pages, in name order."""
    return sorted(LOG.glob("*.md"))
