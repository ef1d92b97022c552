"""The LangChain adapter against the real Neo4j: the retriever, and LangChain's chunks ingested."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

from graphrag_orm import GraphRag
from graphrag_orm.adapters.langchain import (
    GraphRagRetriever,
    chunked_from_langchain,
    header_keys_of,
    ingest_langchain,
)
from graphrag_orm.errors import ConfigurationError, QuestionRefused
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.ingestion import DocumentStatus, IngestionReceipt
from graphrag_orm.placement import place
from graphrag_orm.retrieval import DocumentsScope, RetrievalOptions
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.sync import SyncGraphRag
from tests.integration.adapters_support import (
    CAFE_GUIDE,
    TRAIN_NOTES,
    assert_chunks_are_the_document_bytes,
    counts_of,
    facade,
    markdown_sources,
    placement_table,
    stored_chunks,
)

QUESTION = "When does the café open, and what does the night train cost?"


def assert_documents_are_the_evidence(documents: list[Document], evidence_items: tuple[EvidenceItem, ...]) -> None:
    assert [document.id for document in documents] == [item.chunk_id for item in evidence_items]
    best = max(item.score for item in evidence_items)
    for document, item in zip(documents, evidence_items, strict=True):
        assert document.page_content == item.text
        metadata = document.metadata
        assert metadata["chunkId"] == item.chunk_id
        assert metadata["documentId"] == item.document_id
        assert metadata["sourceUri"] == item.source_uri
        assert metadata.get("title") == item.title and ("title" in metadata) == (item.title is not None)
        assert (metadata["startByte"], metadata["endByte"]) == (item.start_byte, item.end_byte)
        assert metadata["score"] == pytest.approx(item.score / best) and 0 <= metadata["score"] <= 1
        assert metadata["fusedScore"] == item.score
        assert [r["route"] for r in metadata["routes"]] == [r.route for r in item.routes]
        assert metadata["pages"] is None
        assert metadata["kind"] == "evidence" and metadata["citationChecked"] is False


async def test_the_retriever_returns_the_evidence_items_as_documents_with_ids_spans_and_scores(
    corpus: list[Source], connected: GraphRag
) -> None:
    options = RetrievalOptions(max_items=5)
    evidence = await connected.retriever.retrieve(QUESTION, options)
    documents = await GraphRagRetriever(rag=connected, options=options).ainvoke(QUESTION)
    assert len(documents) == len(evidence.items) > 1
    assert_documents_are_the_evidence(documents, evidence.items)
    texts = {source.document_id: (source.text or "").encode() for source in corpus}
    for document in documents:
        span = slice(document.metadata["startByte"], document.metadata["endByte"])
        assert document.page_content.encode() == texts[document.metadata["documentId"]][span]
    # The budget left chunks out: said on every passage, never silent.
    assert evidence.omitted_items > 0
    assert all(d.metadata["omittedItems"] == evidence.omitted_items for d in documents)
    assert all(d.metadata["limitsReached"] == ["MaxItems"] for d in documents)


async def test_the_application_scope_holds_for_every_query(corpus: list[Source], connected: GraphRag) -> None:
    train = next(source for source in corpus if "train" in source.source_uri)
    unscoped = await GraphRagRetriever(rag=connected).ainvoke(QUESTION)
    assert {d.metadata["documentId"] for d in unscoped} == {source.document_id for source in corpus}
    retriever = GraphRagRetriever(rag=connected, scope=DocumentsScope(document_ids=(train.document_id,)))
    for question in (QUESTION, "Émile café Zürich ☕", "東京"):
        documents = await retriever.ainvoke(question)
        assert {d.metadata["documentId"] for d in documents} <= {train.document_id}
    scoped = await retriever.ainvoke(QUESTION)
    assert scoped, "the scoped document still answers"
    evidence = await connected.retriever.retrieve(QUESTION, retriever.retrieval_options)
    assert_documents_are_the_evidence(scoped, evidence.items)


async def test_an_untitled_document_has_no_title_and_scores_can_be_thresholded(connected: GraphRag) -> None:
    untitled = Sources.text("adapters/untitled", "The ferry to Skye leaves Mallaig at half past nine.\n")
    assert (await connected.ingestion.ingest([*markdown_sources(), untitled])).ingested == 3
    documents = await GraphRagRetriever(rag=connected).ainvoke("When does the ferry to Skye leave?")
    ferry = [document for document in documents if document.metadata["sourceUri"] == "text:adapters/untitled"]
    assert ferry and all("title" not in document.metadata for document in ferry)
    assert documents[0].metadata["score"] == 1.0
    assert [d.id for d in documents if d.metadata["score"] >= 0.5] == [
        d.id for d in documents if d.metadata["fusedScore"] >= documents[0].metadata["fusedScore"] / 2
    ]


async def test_a_bad_question_fails_with_the_toolkits_code(corpus: list[Source], connected: GraphRag) -> None:
    with pytest.raises(QuestionRefused) as refused:
        await GraphRagRetriever(rag=connected).ainvoke("   ")
    assert refused.value.code == "empty-question"


async def test_invoke_over_an_async_graphrag_is_refused_with_a_code(connected: GraphRag) -> None:
    with pytest.raises(ConfigurationError) as refused:
        GraphRagRetriever(rag=connected).invoke(QUESTION)
    assert refused.value.code == "invalid-option"
    assert "rag.sync()" in refused.value.message


def test_a_scope_given_twice_differently_or_not_a_scope_is_refused() -> None:
    rag = facade()
    one, other = DocumentsScope(document_ids=("a",)), DocumentsScope(document_ids=("b",))
    with pytest.raises(ConfigurationError) as refused:
        GraphRagRetriever(rag=rag, options=RetrievalOptions(scope=one), scope=other)
    assert refused.value.code == "invalid-option"
    assert GraphRagRetriever(rag=rag, options=RetrievalOptions(scope=one), scope=one).retrieval_options.scope == one
    with pytest.raises(ConfigurationError) as refused:
        GraphRagRetriever(rag=rag, scope={"kind": "everything"})
    assert refused.value.code == "invalid-option"
    with pytest.raises(ConfigurationError) as refused:
        GraphRagRetriever(rag="bolt://somewhere")
    assert refused.value.code == "invalid-option"


def test_invoke_and_ainvoke_run_on_the_blocking_twin(graph: None, neo4j_settings: ConnectionSettings) -> None:
    twin: SyncGraphRag = facade().sync()
    twin.connect(neo4j_settings, neomodel=False)
    try:
        receipt = twin.ingestion.ingest(markdown_sources())
        assert receipt.ingested == 2
        retriever = GraphRagRetriever(rag=twin, options=RetrievalOptions(max_items=4))
        evidence = twin.retriever.retrieve(QUESTION, RetrievalOptions(max_items=4))
        assert_documents_are_the_evidence(retriever.invoke(QUESTION), evidence.items)
        documents = asyncio.run(retriever.ainvoke(QUESTION))
        assert_documents_are_the_evidence(documents, evidence.items)
    finally:
        twin.close()


# --------------------------------------------------------------------- ingestion

HEADINGS = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]


@dataclass(frozen=True)
class Variant:
    """A LangChain splitter as an application would use it, and the placement counts measured for the corpus."""

    name: str
    splitter: Any
    split: Callable[[str], list[Document]]
    expected: dict[str, int]


def _with_heading_path(splitter: MarkdownHeaderTextSplitter, text: str) -> list[Document]:
    """A common recipe: each chunk's heading path written in front of its text, for the embedder."""
    keys = header_keys_of(splitter)
    chunks = []
    for chunk in splitter.split_text(text):
        path = " > ".join(chunk.metadata[key] for key in keys if key in chunk.metadata)
        chunks.append(Document(page_content=f"{path}\n{chunk.page_content}", metadata=chunk.metadata))
    return chunks


def _variants() -> list[Variant]:
    recursive = RecursiveCharacterTextSplitter(chunk_size=160, chunk_overlap=40)
    indexed = RecursiveCharacterTextSplitter(chunk_size=160, chunk_overlap=40, add_start_index=True)
    stripped = MarkdownHeaderTextSplitter(HEADINGS)
    kept = MarkdownHeaderTextSplitter(HEADINGS, strip_headers=False)
    return [
        Variant(
            "RecursiveCharacterTextSplitter(160, overlap 40)",
            recursive,
            lambda text: recursive.create_documents([text]),
            {"chunks": 10, "exact": 10},
        ),
        Variant(
            "RecursiveCharacterTextSplitter(160, overlap 40, add_start_index)",
            indexed,
            lambda text: indexed.create_documents([text]),
            {"chunks": 10, "given": 10},
        ),
        Variant(
            "MarkdownHeaderTextSplitter (headers stripped)",
            stripped,
            stripped.split_text,
            {"chunks": 8, "exact": 6, "normalised": 2},
        ),
        Variant(
            "MarkdownHeaderTextSplitter (strip_headers=False)",
            kept,
            kept.split_text,
            {"chunks": 8, "normalised": 8},
        ),
        Variant(
            "MarkdownHeaderTextSplitter, heading path prepended",
            stripped,
            lambda text: _with_heading_path(stripped, text),
            {"chunks": 8, "prefix-removed": 6, "normalised": 2},
        ),
    ]


VARIANTS = _variants()
MEASURED: dict[str, dict[str, int]] = {}
UNPLACEABLE = "MarkdownHeaderTextSplitter, a tab and 👩‍💻 in a line (a third document)"


@pytest.mark.parametrize("variant", VARIANTS, ids=[variant.name for variant in VARIANTS])
async def test_each_splitters_chunks_are_stored_as_the_document_bytes(
    variant: Variant, connected: GraphRag, store: Store
) -> None:
    sources = markdown_sources()
    documents = [(source, variant.split(source.text or "")) for source in sources]
    receipt = await ingest_langchain(connected, documents, variant.splitter)
    assert receipt.ingested == len(sources), [outcome.error_code for outcome in receipt.documents]
    stored = 0
    for source in sources:
        stored += await assert_chunks_are_the_document_bytes(store, source)
    assert stored == receipt.chunks_written == sum(len(chunks) for _, chunks in documents)
    for outcome, (_, chunks) in zip(receipt.documents, documents, strict=True):
        assert outcome.placement is not None and outcome.placement.placed == len(chunks)
    MEASURED[variant.name] = counts_of(receipt)
    assert MEASURED[variant.name] == variant.expected


async def test_overlapping_chunks_keep_their_overlap_as_stored_spans(connected: GraphRag, store: Store) -> None:
    splitter = RecursiveCharacterTextSplitter(chunk_size=160, chunk_overlap=40)
    source = markdown_sources()[0]
    receipt = await ingest_langchain(connected, [(source, splitter.create_documents([CAFE_GUIDE]))], splitter)
    assert receipt.ingested == 1
    chunks = await stored_chunks(store, source.document_id)
    overlaps = [
        (a["endByte"], b["startByte"])
        for a, b in itertools.pairwise(chunks)
        if isinstance(a["endByte"], int) and isinstance(b["startByte"], int) and b["startByte"] < a["endByte"]
    ]
    assert overlaps, "the splitter's overlap is kept: a chunk starts inside the one before it"


async def test_a_chunk_the_splitter_changed_beyond_whitespace_fails_its_document_and_writes_nothing_of_it(
    connected: GraphRag, store: Store
) -> None:
    # The header splitter drops characters that are not printable: a tab inside a line,
    # and the zero-width joiner of 👩‍💻. No rule may forgive that.
    broken = Sources.text(
        "adapters/desk", "# Desk\n\nKeys\tin the drawer; the 👩‍💻 sits by the window.\n", "text/markdown"
    )
    good = markdown_sources()[1]
    splitter = MarkdownHeaderTextSplitter(HEADINGS)
    documents = [(broken, splitter.split_text(broken.text or "")), (good, splitter.split_text(good.text or ""))]
    assert "\t" not in documents[0][1][0].page_content
    receipt = await ingest_langchain(connected, documents, splitter)
    failed, ingested = receipt.documents
    assert (failed.status, failed.error_code) == (DocumentStatus.FAILED, "position-not-recovered")
    assert ingested.status == DocumentStatus.INGESTED
    MEASURED[UNPLACEABLE] = {"chunks": len(documents[0][1]), "not placed": receipt.count(DocumentStatus.FAILED)}
    left = await store.read("MATCH (n {documentId: $id}) RETURN count(n) AS n", {"id": broken.document_id})
    documents_left = await store.read("MATCH (d:Document {id: $id}) RETURN count(d) AS n", {"id": broken.document_id})
    assert left.single()["n"] == 0 and documents_left.single()["n"] == 0  # type: ignore[index]
    await assert_chunks_are_the_document_bytes(store, good)


async def test_the_same_chunks_again_are_unchanged_and_other_settings_make_other_chunk_ids(
    connected: GraphRag, store: Store
) -> None:
    source = markdown_sources()[1]

    async def ingest(size: int) -> tuple[IngestionReceipt, list[object]]:
        splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=20)
        receipt = await ingest_langchain(connected, [(source, splitter.split_text(TRAIN_NOTES))], splitter)
        ids = await store.read("MATCH (c:Chunk {documentId: $id}) RETURN c.id AS id", {"id": source.document_id})
        return receipt, sorted(ids.column("id"))

    first, ids = await ingest(120)
    again, same = await ingest(120)
    other, changed = await ingest(140)
    assert first.ingested == 1 and again.count(DocumentStatus.UNCHANGED) == 1 and other.ingested == 1
    assert same == ids and not set(changed) & set(ids)
    await assert_chunks_are_the_document_bytes(store, source)


def test_header_metadata_becomes_the_context_and_a_prepended_heading_path_is_removed() -> None:
    splitter = MarkdownHeaderTextSplitter(HEADINGS)
    keys = header_keys_of(splitter)
    assert keys == ("Header 1", "Header 2", "Header 3")
    chunked = chunked_from_langchain(markdown_sources()[0], _with_heading_path(splitter, CAFE_GUIDE), header_keys=keys)
    assert chunked.chunks[1].context == "Café guide: Zürich ☕ > 東京 branch"
    assert chunked.chunks[1].text.startswith("Café guide: Zürich ☕ > 東京 branch\n東京の支店")
    placement = place(CAFE_GUIDE.encode(), chunked.chunks)
    counts = placement.counts
    assert (counts.prefix_removed, counts.normalised, counts.exact) == (3, 2, 0)
    utf8 = CAFE_GUIDE.encode()
    first = placement.chunks[0]
    assert first.start_byte is not None and first.end_byte is not None
    assert utf8[first.start_byte : first.end_byte].decode().startswith("Émile opens the café")


def test_a_start_index_hint_is_checked_not_trusted() -> None:
    source = markdown_sources()[0]
    splitter = RecursiveCharacterTextSplitter(chunk_size=160, chunk_overlap=40, add_start_index=True)
    honest = splitter.create_documents([CAFE_GUIDE])
    lying = [Document(page_content=d.page_content, metadata={"start_index": 3}) for d in honest]
    assert place(CAFE_GUIDE.encode(), chunked_from_langchain(source, honest).chunks).counts.given == len(honest)
    recovered = place(CAFE_GUIDE.encode(), chunked_from_langchain(source, lying).chunks)
    assert recovered.counts.given == 0 and recovered.counts.exact == len(honest)
    # Character offsets became byte offsets: the CJK section's chunk starts past its bytes, not its characters.
    spans = [(c.start_byte, c.end_byte) for c in chunked_from_langchain(source, honest).chunks]
    assert spans == [(c.start_byte, c.end_byte) for c in recovered.chunks]


def test_a_chunk_that_is_not_a_document_or_text_is_refused_with_a_code() -> None:
    with pytest.raises(ConfigurationError) as refused:
        chunked_from_langchain(markdown_sources()[0], [Document(page_content="x"), 42])  # type: ignore[list-item]
    assert refused.value.code == "invalid-source" and "chunk 1" in refused.value.message


def test_the_placement_table_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    names = [variant.name for variant in VARIANTS] + [UNPLACEABLE]
    rows = [(name, MEASURED[name]) for name in names if name in MEASURED]
    if not rows:
        pytest.skip("run with the splitter tests above to measure the table")
    with capsys.disabled():
        print("\n\nLangChain splitters on the adapter corpus (2 Markdown documents):\n" + placement_table(rows))
