"""The recall sample's ontology and its extraction replies (written by hand, not by a model).

The wiki in ``wiki/`` is fiction written for this project, in the spirit of the lesson's
bike example: spec sheets, kits, suppliers, two bulletins and distractors. The replies
below are what a careful extraction model returns for each page; the toolkit checks
and grounds them exactly as it would a model's reply.
"""

from __future__ import annotations

import json
from typing import Any

from graphrag_orm.chat import ChatRequest
from graphrag_orm.chat.evidence_block import parse_evidence, parse_question
from graphrag_orm.ontology import Entity, Ontology


class Bike(Entity):
    """A bicycle model sold under the company's brand."""


class Part(Entity):
    """A component, kit or assembly (part numbers such as BC-310 or BK-7 are names)."""


class Supplier(Entity):
    """A company that supplies parts."""


class Bulletin(Entity):
    """A service bulletin or recall notice, named by its number (SB-...)."""


BIKES = Ontology.custom(
    name="bikes",
    entities=[Bike, Part, Supplier, Bulletin],
    facts=[
        (Bike, "HAS_PART", Part),
        (Part, "HAS_PART", Part),
        (Part, "SUPPLIED_BY", Supplier),
        (Bulletin, "COVERS", Part),
    ],
    placeholders=["it", "they", "the part", "the bike"],
    instructions="A bulletin COVERS the parts it is about, whether or not it recalls them.",
)


def _e(kind: str, name: str, *mentions: str) -> dict[str, Any]:
    return {"kind": kind, "name": name, "aliases": [], "description": None, "mentions": list(mentions) or [name]}


def _f(source: str, fact_type: str, target: str) -> dict[str, Any]:
    return {"type": fact_type, "source": source, "target": target, "role": None, "kind": None, "description": None}


#: Written by hand for each page (keyed by its heading), in the reply format of API.md section 7.
REPLIES: dict[str, dict[str, Any]] = {
    "# Service bulletin SB-2026-07": {
        "entities": [
            _e("Bulletin", "SB-2026-07"),
            _e("Supplier", "Kestrel Components"),
            _e("Part", "BC-310", "brake caliper BC-310"),
        ],
        "relationships": [_f("SB-2026-07", "COVERS", "BC-310"), _f("BC-310", "SUPPLIED_BY", "Kestrel Components")],
    },
    "# Supplier profile: Kestrel Components": {
        "entities": [
            _e("Supplier", "Kestrel Components"),
            _e("Part", "BC-310"),
            _e("Part", "BC-420"),
            _e("Part", "BL-20", "brake lever BL-20"),
        ],
        "relationships": [
            _f("BC-310", "SUPPLIED_BY", "Kestrel Components"),
            _f("BC-420", "SUPPLIED_BY", "Kestrel Components"),
            _f("BL-20", "SUPPLIED_BY", "Kestrel Components"),
        ],
    },
    "# Cargo 2 (2026) spec sheet": {
        "entities": [_e("Bike", "Cargo 2"), _e("Part", "BC-420"), _e("Supplier", "Kestrel Components", "Kestrel")],
        "relationships": [_f("Cargo 2", "HAS_PART", "BC-420"), _f("BC-420", "SUPPLIED_BY", "Kestrel")],
    },
    "# City 3 (2026) spec sheet": {
        "entities": [_e("Bike", "City 3"), _e("Part", "BT-4417", "battery BT-4417"), _e("Part", "BC-310")],
        "relationships": [_f("City 3", "HAS_PART", "BC-310"), _f("City 3", "HAS_PART", "BT-4417")],
    },
    "# Trail 5 (2026) spec sheet": {
        "entities": [_e("Bike", "Trail 5"), _e("Part", "BT-6250"), _e("Part", "BK-7", "brake kit BK-7")],
        "relationships": [_f("Trail 5", "HAS_PART", "BK-7"), _f("Trail 5", "HAS_PART", "BT-6250")],
    },
    "# Brake kit BK-7": {
        "entities": [_e("Part", "BK-7", "Brake kit BK-7"), _e("Part", "BC-310"), _e("Part", "BL-20")],
        "relationships": [_f("BK-7", "HAS_PART", "BC-310"), _f("BK-7", "HAS_PART", "BL-20")],
    },
    "# Kids 1 spec sheet": {
        "entities": [_e("Bike", "Kids 1"), _e("Part", "RB-12", "rim brakes RB-12"), _e("Supplier", "Tallis Parts")],
        "relationships": [_f("Kids 1", "HAS_PART", "RB-12"), _f("RB-12", "SUPPLIED_BY", "Tallis Parts")],
    },
    "# Service bulletin SB-2026-05": {
        "entities": [_e("Bulletin", "SB-2026-05"), _e("Part", "BT-4417", "Battery BT-4417")],
        "relationships": [_f("SB-2026-05", "COVERS", "BT-4417")],
    },
    "# Service bulletin SB-2025-11": {
        "entities": [
            _e("Bulletin", "SB-2025-11"),
            _e("Supplier", "Kestrel Components"),
            _e("Part", "BL-20", "brake lever BL-20"),
        ],
        "relationships": [_f("SB-2025-11", "COVERS", "BL-20"), _f("BL-20", "SUPPLIED_BY", "Kestrel Components")],
    },
    "# Tour 4 (2026) spec sheet": {
        "entities": [
            _e("Bike", "Tour 4"),
            _e("Part", "RB-20", "Tallis RB-20"),
            _e("Supplier", "Tallis Parts", "Tallis"),
        ],
        "relationships": [_f("Tour 4", "HAS_PART", "RB-20"), _f("RB-20", "SUPPLIED_BY", "Tallis")],
    },
    "# Visit to the Kestrel caliper plant": {
        "entities": [_e("Supplier", "Kestrel Components")],
        "relationships": [],
    },
    "# Urban 2 (2026) spec sheet": {
        "entities": [_e("Bike", "Urban 2"), _e("Part", "BK-9", "brake kit BK-9")],
        "relationships": [_f("Urban 2", "HAS_PART", "BK-9")],
    },
    "# Brake kit BK-9": {
        "entities": [_e("Part", "BK-9", "Brake kit BK-9"), _e("Part", "BC-420"), _e("Part", "BL-20")],
        "relationships": [_f("BK-9", "HAS_PART", "BC-420"), _f("BK-9", "HAS_PART", "BL-20")],
    },
}
EMPTY: dict[str, Any] = {"entities": [], "relationships": []}

RECALL_QUESTION = "Which products are affected by the Kestrel brake caliper recall?"
AFFECTED = ("City 3", "Trail 5")


def extraction_reply(request: ChatRequest) -> str:
    """The hand-written reply for the page an extraction request carries."""
    passage = request.messages[1].content.removeprefix("Passage:\n")
    heading = passage.split("\n", 1)[0].strip()
    return json.dumps(REPLIES.get(heading, EMPTY))


#: The recall answer, written by hand: each claim with the exact words of the page that states it.
ANSWER = (
    "City 3 and Trail 5 are affected. The bulletin recalls the BC-310 caliper; City 3 uses BC-310 calipers, "
    "and Trail 5 uses brake kit BK-7, which contains two BC-310 calipers."
)
CITED = (
    "Kestrel Components recalls brake caliper BC-310",
    "BC-310 hydraulic calipers front and rear",
    "brake kit BK-7",
    "two BC-310 calipers",
)


def answer_reply(request: ChatRequest) -> str:
    """Answers the recall question by quoting the pages in the evidence that state each link."""
    if request.schema_name != "answer":
        return json.dumps({"question": parse_question(request.messages[-1].content)})
    items = parse_evidence(request.messages[-1].content)
    citations = []
    for quote in CITED:
        chunk = next((chunk_id for chunk_id, text in items if quote in text), None)
        # A link whose page is not in the evidence is still cited; the check refuses it.
        citations.append({"chunkId": chunk or "not-in-evidence", "quote": quote})
    return json.dumps({"answer": ANSWER, "citations": citations, "insufficient": None})


#: The bulletin's link and each affected product's links, as the pages word them.
BULLETIN_LINK = CITED[0]
PRODUCT_LINKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("City 3", (CITED[1],)),
    ("Trail 5", (CITED[2], CITED[3])),
)
#: A question the wiki does not answer, and the invented answer the demo's hand-written reply gives it.
REFUSAL_QUESTION = "When was Kestrel Components founded?"
INVENTED = "Kestrel Components was founded in 1987"


def careful_answer_reply(request: ChatRequest) -> str:
    """A hand-written model that names only what the evidence it is shown proves.

    For the recall question it cites the bulletin and every link of each product whose
    links are all in the evidence, and names only those products: given plain top-k
    evidence it answers, cited but incomplete, which is what plain RAG gets wrong. For
    any other question it invents a founding year and a quote, so the demo shows the
    citation check refusing it.
    """
    if request.schema_name != "answer":
        return json.dumps({"question": parse_question(request.messages[-1].content)})
    prompt = request.messages[-1].content
    items = parse_evidence(prompt)

    def where(quote: str) -> str | None:
        return next((chunk_id for chunk_id, text in items if quote in text), None)

    if parse_question(prompt) != RECALL_QUESTION:
        chunk = items[0][0] if items else "not-in-evidence"
        citation = {"chunkId": chunk, "quote": INVENTED}
        return json.dumps({"answer": f"{INVENTED}.", "citations": [citation], "insufficient": None})
    bulletin = where(BULLETIN_LINK)
    if bulletin is None:
        return json.dumps({"answer": None, "citations": None, "insufficient": "no recall bulletin in the evidence"})
    citations = [{"chunkId": bulletin, "quote": BULLETIN_LINK}]
    named: list[str] = []
    for product, links in PRODUCT_LINKS:
        located = [(where(link), link) for link in links]
        if all(chunk for chunk, _ in located):
            named.append(product)
            citations.extend({"chunkId": chunk, "quote": link} for chunk, link in located)
    if named == list(AFFECTED):
        text = ANSWER
    elif named:
        text = f"{named[0]} is affected: the bulletin recalls the BC-310 caliper, and {named[0]} uses it."
    else:
        text = "The bulletin recalls the Kestrel BC-310 brake caliper; the evidence names no product that uses it."
    return json.dumps({"answer": text, "citations": citations, "insufficient": None})
