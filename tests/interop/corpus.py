"""The interop suite's documents, its questions and the scripted extraction (fictional harbour notes).

The texts mix accents, CJK, Greek and emoji, so byte spans and character counts differ.
:func:`extraction_reply` is the scripted model: for a passage, every thing of
:data:`THINGS` whose name the passage contains, each mentioned by its name, and every
fact of :data:`FACTS` whose two ends it contains; :func:`things_in` is the same rule,
which the tests compare with what each stack reads.
"""

from __future__ import annotations

from typing import Any

DOCUMENTS: dict[str, str] = {
    "harbour/pilots.md": (
        "# Pilots of Portvale\n\n"
        "Inès Duarte leads the pilot station of Lumen Freight at Portvale. "
        "She boards every tanker above 40,000 tonnes before the outer buoy.\n\n"
        "The station keeps two launches, Aster and Borealis, on the north quay. "
        "Night transits need a second pilot and a tug from Portvale Towage.\n\n"
        "Pilots log each transit in the harbour register; the register closes at midnight ⚓.\n"
    ),
    "harbour/barrier.md": (
        "# The tidal barrier\n\n"
        "Portvale's tidal barrier closes when the surge forecast passes 1.2 metres. "
        "Lumen Freight pays for the barrier's yearly inspection.\n\n"
        "Zoë Kowalski, the barrier engineer, signs the closure order; "
        "her deputy Ωmega Team tests the gates every Sunday 🌊.\n\n"
        "During a closure no vessel enters, and the pilots wait at the outer buoy.\n"
    ),
    "harbour/tea.md": (
        "# 東京 branch\n\n"
        "東京の支店は駅の近くにあります。 Lumen Freight ships matcha from Tokyo to Portvale.\n\n"
        "The tea arrives on Thursdays and sells out by noon at the café on the quay ☕.\n"
    ),
}

#: Questions asked of both stacks (their retrievers and our answers).
QUESTIONS = (
    "Who signs the closure order of the tidal barrier?",
    "When does the harbour register close?",
    "What does Lumen Freight ship from Tokyo?",
)

THINGS: tuple[tuple[str, str], ...] = (
    ("Person", "Inès Duarte"),
    ("Person", "Zoë Kowalski"),
    ("Organization", "Lumen Freight"),
    ("Organization", "Portvale Towage"),
    ("Place", "Portvale"),
    ("Place", "Tokyo"),
    ("Concept", "tidal barrier"),
)

FACTS: tuple[tuple[str, str, str], ...] = (
    ("Inès Duarte", "WORKS_FOR", "Lumen Freight"),
    ("Lumen Freight", "LOCATED_IN", "Portvale"),
    ("Portvale Towage", "LOCATED_IN", "Portvale"),
)


def things_in(passage: str) -> dict[str, str]:
    """The things the scripted model extracts from ``passage``: name -> kind."""
    return {name: kind for kind, name in THINGS if name in passage}


def extraction_reply(passage: str) -> dict[str, Any]:
    """The scripted extraction reply for one passage (the format of the API's section 7)."""
    found = things_in(passage)
    entities = [
        {"kind": kind, "name": name, "aliases": [], "description": None, "mentions": [name]}
        for name, kind in found.items()
    ]
    relationships = [
        {"type": kind, "source": source, "target": target, "role": None, "kind": None, "description": None}
        for source, kind, target in FACTS
        if source in found and target in found
    ]
    return {"entities": entities, "relationships": relationships}
