"""Adoption offline: options, keys, grounding of a document's chunks, steps, and the JSON of passages."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from graphrag_orm.adoption import AdoptionOptions, adopted_chunk_id, adopted_uri
from graphrag_orm.adoption.placing import ground
from graphrag_orm.adoption.plan import Adoption
from graphrag_orm.adoption.statements import AdoptionStatements
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import EvidenceItem, Grounding
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.models import for_layout
from graphrag_orm.server.views import Passage
from graphrag_orm.sources import Sources, content_hash, document_id
from graphrag_orm.store import Store
from graphrag_orm.tools.values import ToolPassage

SET = EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=64)
TEXT = "Émile lights the lantern ☕ at dusk.\nShips pass the rocks at night.\n"
CHUNKS = [TEXT[0:30], TEXT[20:50], TEXT[40:]]  # overlapping, as fixed-size splitters make them
LOADERS = LoaderRegistry.default()


def test_source_files_take_a_source_or_a_path_and_bounds_are_options(tmp_path: Path) -> None:
    named = Sources.file(tmp_path / "a.txt", uri="https://example.org/a.txt")
    options = AdoptionOptions(source_files={"/data/a.txt": named, "/data/b.txt": tmp_path / "b.txt"})
    assert options.source_files["/data/a.txt"] is named
    assert options.source_files["/data/b.txt"] == Sources.file(tmp_path / "b.txt")
    for bad in ({"batch_size": 0}, {"batch_size": 10_001}, {"max_listed": -1}, {"max_listed": 1_001}):
        with pytest.raises(ConfigurationError) as refused:
            AdoptionOptions(**bad)
        assert refused.value.code == "invalid-option"


def test_keys_hash_the_source_uri_and_the_document_and_index() -> None:
    assert adopted_uri("/data/a b.txt") == "adopted:/data/a b.txt"  # kept as stored, spaces and all
    document = document_id(adopted_uri("/data/a.txt"))
    assert document == hashlib.sha256(b"adopted:/data/a.txt").hexdigest()
    assert adopted_chunk_id(document, 3) == hashlib.sha256(f"{document}:3".encode()).hexdigest()
    assert adopted_chunk_id(document, 3) != adopted_chunk_id(document, 4)


async def test_without_a_source_every_chunk_is_grounded_in_its_own_text() -> None:
    grounded = await ground("/data/a.txt", CHUNKS, None, LOADERS)
    assert grounded.grounding is Grounding.CHUNK and not grounded.had_source
    assert grounded.spans == tuple((0, len(chunk.encode())) for chunk in CHUNKS)
    assert grounded.source_uri == "adopted:/data/a.txt" and grounded.media_type == "text/plain"
    joined = "".join(CHUNKS).encode()
    assert (grounded.content_hash, grounded.length_bytes) == (content_hash(joined), len(joined))


async def test_a_source_file_holding_the_chunks_byte_exact_places_them(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(TEXT.encode())
    source = Sources.file(path, uri="https://example.org/a.txt")
    grounded = await ground("/data/a.txt", CHUNKS, source, LOADERS)
    assert grounded.grounding is Grounding.SOURCE
    assert grounded.document_id == document_id("https://example.org/a.txt")
    utf8 = TEXT.encode()
    assert [utf8[start:end].decode() for start, end in grounded.spans] == CHUNKS
    assert (grounded.content_hash, grounded.length_bytes) == (content_hash(utf8), len(utf8))


@pytest.mark.parametrize(
    ("file_text", "chunks"),
    [
        (TEXT.replace("\n", "\r\n"), CHUNKS),  # line ends differ: never normalised
        (TEXT, [CHUNKS[0], "   ", CHUNKS[2]]),  # a blank chunk has no place of its own
        (TEXT, [CHUNKS[2], CHUNKS[0]]),  # out of order
        ("# Title\n\n" + TEXT, ["# Heading\n\n" + CHUNKS[0]]),  # only placed with a heading removed
    ],
)
async def test_a_source_file_that_does_not_hold_the_chunks_as_they_are_leaves_them_chunk_grounded(
    tmp_path: Path, file_text: str, chunks: list[str]
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(file_text.encode())
    grounded = await ground("/data/a.txt", chunks, Sources.file(path), LOADERS)
    assert grounded.grounding is Grounding.CHUNK and grounded.had_source
    assert grounded.source_uri == Sources.file(path).source_uri  # still named by its file
    assert grounded.spans == tuple((0, len(chunk.encode())) for chunk in chunks)


async def test_a_missing_source_file_leaves_the_chunks_chunk_grounded(tmp_path: Path) -> None:
    grounded = await ground("/data/a.txt", CHUNKS, Sources.file(tmp_path / "gone.txt"), LOADERS)
    assert grounded.grounding is Grounding.CHUNK


def test_prepare_steps_leave_out_the_indexes_the_layout_names() -> None:
    every = {s.definition.name for s in Adoption(Store()).plan(Layout.NEO4J_GRAPHRAG, SET).prepare_steps()}
    named = Layout.NEO4J_GRAPHRAG.replace(vector_index="text_embeddings", fulltext_index="chunk_text")
    steps = {s.definition.name for s in Adoption(Store()).plan(named, SET).prepare_steps()}
    assert every - steps == {Layout.NEO4J_GRAPHRAG.vector_index_name(SET.vector_index_name), "graphrag_chunk_text"}
    assert {"graphrag_document_id_unique", "graphrag_chunk_id_unique"} <= steps


def test_a_layout_naming_a_chunk_property_grounding_is_refused() -> None:
    with pytest.raises(ConfigurationError) as refused:
        Adoption(Store()).plan(Layout.NEO4J_GRAPHRAG.replace(chunk_text_property="grounding"), SET)
    assert refused.value.code == "invalid-layout"


def test_apply_writes_exactly_the_keys_undo_removes() -> None:
    statements = AdoptionStatements.render(for_layout(Layout.NEO4J_GRAPHRAG))
    assert set(statements.document_keys) == {"id", "sourceUri", "mediaType", "contentHash", "lengthBytes", "runId"}
    assert set(statements.chunk_keys) == {
        "id",
        "documentId",
        "startByte",
        "endByte",
        "grounding",
        "embeddingSetId",
        "runId",
    }
    for key in statements.document_keys:
        assert f"n.{key}" in statements.undo_documents
    for key in statements.chunk_keys:
        assert f"n.{key}" in statements.undo_chunks
    assert "FROM_DOCUMENT" in statements.page and "ORDER BY d.path" in statements.page


def test_a_stored_grounding_reads_as_chunk_only_when_it_says_chunk() -> None:
    assert Grounding.stored("Chunk") is Grounding.CHUNK
    assert Grounding.stored(None) is Grounding.SOURCE and Grounding.stored("Source") is Grounding.SOURCE


def _item(grounding: Grounding, origin: str | None = None) -> EvidenceItem:
    return EvidenceItem(
        chunk_id="c",
        document_id="d",
        source_uri="adopted:/data/a.txt",
        text="Ships pass.",
        start_byte=0,
        end_byte=11,
        score=0.5,
        grounding=grounding,
        text_origin=origin,
    )


def test_passages_name_a_chunk_grounding_and_a_text_origin_and_read_as_before_otherwise() -> None:
    plain = Passage.of(_item(Grounding.SOURCE)).model_dump(mode="json", by_alias=True)
    assert "grounding" not in plain and "textOrigin" not in plain
    derived = Passage.of(_item(Grounding.CHUNK, "ocr: Tesseract 5.3")).model_dump(mode="json", by_alias=True)
    assert (derived["grounding"], derived["textOrigin"]) == ("Chunk", "ocr: Tesseract 5.3")
    assert Passage.of(_item(Grounding.CHUNK)).model_dump()["grounding"] is Grounding.CHUNK  # Python keeps every field

    def tool(item: EvidenceItem) -> dict[str, object]:
        passage = ToolPassage(
            chunk_id=item.chunk_id,
            document_id=item.document_id,
            source_uri=item.source_uri,
            start_byte=item.start_byte,
            end_byte=item.end_byte,
            text=item.text,
            score=item.score,
            grounding=item.grounding,
            text_origin=item.text_origin,
        )
        return passage.model_dump(mode="json", by_alias=True)

    assert not {"grounding", "textOrigin"} & set(tool(_item(Grounding.SOURCE)))
    assert tool(_item(Grounding.CHUNK, "transcript: whisper"))["grounding"] == "Chunk"
    assert tool(_item(Grounding.CHUNK, "transcript: whisper"))["textOrigin"] == "transcript: whisper"


def _rendered(layout: Layout) -> dict[str, object]:
    """Every statement and key list adoption renders for ``layout``, by attribute name."""
    statements = AdoptionStatements.render(for_layout(layout))
    found: dict[str, object] = {}
    for name in dir(AdoptionStatements):
        if name.startswith("_") or name in ("render", "names"):
            continue
        value = getattr(statements, name)
        found[name] = {code.value: cypher for code, cypher in value.items()} if isinstance(value, dict) else value
    return found


def test_untenanted_statements_render_as_before_tenancy_and_tenanted_ones_all_carry_the_tenant() -> None:
    # Recorded from the rendering before adoption per tenant (the untenanted graph's statements).
    recorded = {
        "neo4j-graphrag": "06ba708b65ffd7401bcacf8d0edd8464fa7322c65fab8470d85f5b9ebe57f792",
        "default": "4bb1e5d483e9f6c0cfbdbb37251bfad3edb276e1f6a6a0165902f13fdbaa8b3e",
    }
    for name, layout in (("neo4j-graphrag", Layout.NEO4J_GRAPHRAG), ("default", Layout.DEFAULT)):
        digest = hashlib.sha256(json.dumps(_rendered(layout), sort_keys=True).encode()).hexdigest()
        assert digest == recorded[name], name
    tenanted = _rendered(Layout.NEO4J_GRAPHRAG.replace(tenancy="required"))
    for name, value in tenanted.items():
        texts = list(value.values()) if isinstance(value, dict) else [value]
        for text in texts:
            if isinstance(text, str):
                assert "$tenant" in text, name
    assert "tenant" in tenanted["document_keys"] and "tenant" in tenanted["chunk_keys"]  # type: ignore[operator]
