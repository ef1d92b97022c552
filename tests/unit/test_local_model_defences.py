"""What a weak local model needs from the requests: schemas its grammar converter reads, bounded arrays,
and no name from the instructions' examples kept when the passage does not hold it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graphrag_orm.answers.prompt import ANSWER_SCHEMA
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.extraction import ExtractionOptions, Extractor, PruneReason
from graphrag_orm.extraction.grounding import DocumentKnowledge, ExtractionChunk, Grounder
from graphrag_orm.extraction.reply import EntityCandidate, RawExtraction
from graphrag_orm.ontologies import article, generic, novel
from graphrag_orm.ontology import Ontology
from graphrag_orm.text2cypher.prompt import GRAPH_SCHEMA

ONTOLOGIES = (generic.ONTOLOGY, novel.ONTOLOGY, article.ONTOLOGY)


def nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every schema node under ``schema``, itself included."""
    yield schema
    for child in (*schema.get("properties", {}).values(), *schema.get("anyOf", ())):
        yield from nodes(child)
    if "items" in schema:
        yield from nodes(schema["items"])


def extraction_schema(ontology: Ontology) -> dict[str, Any]:
    return Extractor(ontology, ScriptedChat({}), ExtractionOptions())._json_schema


def every_schema() -> list[dict[str, Any]]:
    return [ANSWER_SCHEMA, GRAPH_SCHEMA, *(extraction_schema(o) for o in ONTOLOGIES)]


@pytest.mark.parametrize("schema", every_schema(), ids=["answer", "graph", *(o.name for o in ONTOLOGIES)])
def test_no_schema_sent_to_a_model_writes_a_nullable_field_as_a_type_list(schema: dict[str, Any]) -> None:
    # llama.cpp's grammar converter drops "items" from {"type": ["array", "null"], ...}.
    assert all(isinstance(node.get("type", ""), str) for node in nodes(schema))
    assert any("anyOf" in node for node in nodes(schema))


def test_every_extraction_array_is_bounded_by_the_options() -> None:
    options = ExtractionOptions(max_entities_per_chunk=7, max_relationships_per_chunk=8, max_quotes_per_chunk=9)
    schema = Extractor(novel.ONTOLOGY, ScriptedChat({}), options)._json_schema
    properties = schema["properties"]
    assert [properties[name]["maxItems"] for name in ("entities", "relationships", "quotes")] == [7, 8, 9]
    entity = properties["entities"]["items"]["properties"]
    assert entity["aliases"]["maxItems"] == entity["mentions"]["maxItems"] == options.max_mentions_per_entity
    assert all("maxItems" in node for node in nodes(schema) if node.get("type") == "array")


async def test_a_name_from_the_instructions_examples_is_pruned_unless_the_passage_holds_it() -> None:
    assert "Mara" in (novel.ONTOLOGY.instructions or "")
    passage = "Alice was beginning to get very tired of sitting by her sister on the bank."

    def character(name: str, *mentions: str) -> EntityCandidate:
        return EntityCandidate(kind="Character", name=name, aliases=(), description=None, mentions=mentions)

    raw = RawExtraction(
        entities=(character("Mara", "her sister"), character("Alice", "Alice")), relationships=(), quotes=()
    )
    knowledge = DocumentKnowledge()
    grounder = Grounder(novel.ONTOLOGY, ExtractionOptions())
    await grounder.add_chunk(knowledge, ExtractionChunk("c1", "d", passage, 0), raw)
    assert [thing.name for thing in knowledge.things.values()] == ["Alice"]
    assert [(p.item, p.reason) for p in knowledge.pruned] == [("Character Mara", PruneReason.EXAMPLE_NAME)]

    held = DocumentKnowledge()
    await grounder.add_chunk(held, ExtractionChunk("c2", "d", "“Not tonight,” said Mara.", 0), raw)
    assert "Mara" in {thing.name for thing in held.things.values()}
