"""The LlamaIndex adapter against the real Neo4j: the retriever, and LlamaIndex's nodes ingested.

``SentenceSplitter`` reads NLTK's sentence tokenizer from the data llama-index-core bundles.
NLTK 3.10 refuses to open a data file with more than one hard link, and an installer that
hard-links packages from its cache (uv does by default) leaves exactly that; so the tests
point ``NLTK_DATA`` at a plain copy of the bundled data, as such an installation must.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_index.core
import pytest
from llama_index.core import Document as LlamaDocument
from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, TextNode

from graphrag_orm import GraphRag
from graphrag_orm.adapters.llamaindex import (
    GraphRagRetriever,
    chunked_from_llamaindex,
    ingest_llamaindex,
    llamaindex_fingerprint,
)
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.placement import place
from graphrag_orm.retrieval import DocumentsScope, RetrievalOptions
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.integration.adapters_support import (
    CAFE_GUIDE,
    assert_chunks_are_the_document_bytes,
    counts_of,
    facade,
    markdown_sources,
    placement_table,
    stored_chunks,
)

QUESTION = "When does the café open, and what does the night train cost?"


@pytest.fixture(scope="module", autouse=True)
def nltk_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    bundled = Path(llama_index.core.__file__).parent / "_static" / "nltk_cache"
    copy = tmp_path_factory.mktemp("nltk") / "nltk_cache"
    shutil.copytree(bundled, copy)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NLTK_DATA", str(copy))
        yield


def assert_nodes_are_the_evidence(nodes: list[NodeWithScore], items: tuple[EvidenceItem, ...]) -> None:
    assert [scored.node.node_id for scored in nodes] == [item.chunk_id for item in items]
    best = max(item.score for item in items)
    for scored, item in zip(nodes, items, strict=True):
        node = scored.node
        assert isinstance(node, TextNode)
        assert scored.score == pytest.approx(item.score / best) and 0 <= (scored.score or 0) <= 1
        assert node.text == item.text
        assert node.ref_doc_id == item.document_id
        metadata = node.metadata
        assert metadata["chunkId"] == item.chunk_id and metadata["documentId"] == item.document_id
        assert metadata["sourceUri"] == item.source_uri and metadata.get("title") == item.title
        assert (metadata["startByte"], metadata["endByte"]) == (item.start_byte, item.end_byte)
        assert metadata["score"] == scored.score and metadata["fusedScore"] == item.score
        assert [r["route"] for r in metadata["routes"]] == [r.route for r in item.routes]
        assert metadata["pages"] is None
        assert metadata["kind"] == "evidence" and metadata["citationChecked"] is False


async def test_the_retriever_returns_the_evidence_items_as_scored_nodes(
    corpus: list[Source], connected: GraphRag
) -> None:
    options = RetrievalOptions(max_items=5)
    evidence = await connected.retriever.retrieve(QUESTION, options)
    nodes = await GraphRagRetriever(connected, options=options).aretrieve(QUESTION)
    assert len(nodes) == len(evidence.items) > 1
    assert_nodes_are_the_evidence(nodes, evidence.items)
    texts = {source.document_id: (source.text or "").encode() for source in corpus}
    for scored in nodes:
        metadata = scored.node.metadata
        assert (
            scored.node.get_content().encode()
            == texts[metadata["documentId"]][metadata["startByte"] : metadata["endByte"]]
        )
    # A model reads the title and the source with the text, not the ids and numbers.
    shown = nodes[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert "sourceUri: text:adapters/" in shown and "chunkId" not in shown and "startByte" not in shown
    assert nodes[0].node.get_content(metadata_mode=MetadataMode.EMBED) == nodes[0].node.get_content()
    assert all(scored.node.metadata["limitsReached"] == ["MaxItems"] for scored in nodes)


async def test_a_usual_similarity_cutoff_keeps_the_best_passages(corpus: list[Source], connected: GraphRag) -> None:
    from llama_index.core.postprocessor import SimilarityPostprocessor

    nodes = await GraphRagRetriever(connected, options=RetrievalOptions(max_items=6)).aretrieve(QUESTION)
    assert nodes[0].score == 1.0 and all(0 <= (scored.score or 0) <= 1 for scored in nodes)
    kept = SimilarityPostprocessor(similarity_cutoff=0.5).postprocess_nodes(nodes)
    # The fused scores (about 0.03) would all fall under 0.5; relative to the best one they do not.
    assert kept and kept[0].node.node_id == nodes[0].node.node_id
    best = nodes[0].node.metadata["fusedScore"]
    assert [n.node.node_id for n in kept] == [
        n.node.node_id for n in nodes if n.node.metadata["fusedScore"] >= best / 2
    ]


async def test_an_untitled_document_reaches_the_model_without_a_title_none(connected: GraphRag) -> None:
    untitled = Sources.text("adapters/untitled", "The ferry to Skye leaves Mallaig at half past nine.\n")
    assert (await connected.ingestion.ingest([untitled])).ingested == 1
    nodes = await GraphRagRetriever(connected).aretrieve("When does the ferry to Skye leave?")
    assert nodes and all("title" not in scored.node.metadata for scored in nodes)
    shown = nodes[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert "None" not in shown and "sourceUri: text:adapters/untitled" in shown


async def test_the_application_scope_holds_for_every_query(corpus: list[Source], connected: GraphRag) -> None:
    cafe = next(source for source in corpus if "cafe" in source.source_uri)
    unscoped = await GraphRagRetriever(connected).aretrieve(QUESTION)
    assert {n.node.metadata["documentId"] for n in unscoped} == {source.document_id for source in corpus}
    retriever = GraphRagRetriever(connected, scope=DocumentsScope(document_ids=(cafe.document_id,)))
    for question in (QUESTION, "night train Kraków 129 €", "北京"):
        nodes = await retriever.aretrieve(question)
        assert {n.node.metadata["documentId"] for n in nodes} <= {cafe.document_id}
    scoped = await retriever.aretrieve(QUESTION)
    assert scoped
    evidence = await connected.retriever.retrieve(QUESTION, retriever.options)
    assert_nodes_are_the_evidence(scoped, evidence.items)


async def test_retrieve_over_an_async_graphrag_is_refused_with_a_code(connected: GraphRag) -> None:
    with pytest.raises(ConfigurationError) as refused:
        GraphRagRetriever(connected).retrieve(QUESTION)
    assert refused.value.code == "invalid-option" and "rag.sync()" in refused.value.message


def test_a_scope_given_twice_differently_or_a_rag_that_is_not_one_is_refused() -> None:
    rag = facade()
    one, other = DocumentsScope(document_ids=("a",)), DocumentsScope(document_ids=("b",))
    with pytest.raises(ConfigurationError) as refused:
        GraphRagRetriever(rag, options=RetrievalOptions(scope=one), scope=other)
    assert refused.value.code == "invalid-option"
    with pytest.raises(ConfigurationError) as refused:
        GraphRagRetriever("bolt://somewhere")  # type: ignore[arg-type]
    assert refused.value.code == "invalid-option"


def test_retrieve_and_aretrieve_run_on_the_blocking_twin(graph: None, neo4j_settings: ConnectionSettings) -> None:
    twin = facade().sync()
    twin.connect(neo4j_settings, neomodel=False)
    try:
        assert twin.ingestion.ingest(markdown_sources()).ingested == 2
        options = RetrievalOptions(max_items=4)
        retriever = GraphRagRetriever(twin, options=options)
        evidence = twin.retriever.retrieve(QUESTION, options)
        assert_nodes_are_the_evidence(retriever.retrieve(QUESTION), evidence.items)
        assert_nodes_are_the_evidence(asyncio.run(retriever.aretrieve(QUESTION)), evidence.items)
    finally:
        twin.close()


# --------------------------------------------------------------------- ingestion


def _without_positions(nodes: list[BaseNode]) -> list[BaseNode]:
    for node in nodes:
        if isinstance(node, TextNode):
            node.start_char_idx = node.end_char_idx = None
    return nodes


@dataclass(frozen=True)
class Variant:
    """A LlamaIndex parser as an application would use it, and the placement counts measured for the corpus."""

    name: str
    parser: Any
    nodes: Callable[[str], list[BaseNode]]
    expected: dict[str, int]


def _variants() -> list[Variant]:
    sentences = SentenceSplitter(chunk_size=64, chunk_overlap=16)
    markdown = MarkdownNodeParser()
    return [
        Variant(
            "SentenceSplitter(64 tokens, overlap 16)",
            sentences,
            lambda text: sentences.get_nodes_from_documents([LlamaDocument(text=text)]),
            {"chunks": 8, "given": 8},
        ),
        Variant(
            "SentenceSplitter(64 tokens, overlap 16), char indices removed",
            sentences,
            lambda text: _without_positions(sentences.get_nodes_from_documents([LlamaDocument(text=text)])),
            {"chunks": 8, "exact": 8},
        ),
        Variant(
            "MarkdownNodeParser",
            markdown,
            lambda text: markdown.get_nodes_from_documents([LlamaDocument(text=text)]),
            {"chunks": 8, "given": 8},
        ),
    ]


VARIANTS = _variants()
MEASURED: dict[str, dict[str, int]] = {}


@pytest.mark.parametrize("variant", VARIANTS, ids=[variant.name for variant in VARIANTS])
async def test_each_parsers_nodes_are_stored_as_the_document_bytes(
    variant: Variant, connected: GraphRag, store: Store
) -> None:
    sources = markdown_sources()
    documents = [(source, variant.nodes(source.text or "")) for source in sources]
    receipt = await ingest_llamaindex(connected, documents, variant.parser)
    assert receipt.ingested == len(sources), [outcome.error_code for outcome in receipt.documents]
    stored = 0
    for source in sources:
        stored += await assert_chunks_are_the_document_bytes(store, source)
    assert stored == receipt.chunks_written == sum(len(nodes) for _, nodes in documents)
    MEASURED[variant.name] = counts_of(receipt)
    assert MEASURED[variant.name] == variant.expected


def test_the_placement_table_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [(variant.name, MEASURED[variant.name]) for variant in VARIANTS if variant.name in MEASURED]
    if not rows:
        pytest.skip("run with the parser tests above to measure the table")
    with capsys.disabled():
        print("\n\nLlamaIndex parsers on the adapter corpus (2 Markdown documents):\n" + placement_table(rows))


async def test_overlapping_sentence_chunks_keep_their_overlap_as_stored_spans(
    connected: GraphRag, store: Store
) -> None:
    parser = SentenceSplitter(chunk_size=64, chunk_overlap=16)
    source = markdown_sources()[0]
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=CAFE_GUIDE)])
    receipt = await ingest_llamaindex(connected, [(source, nodes)], parser)
    assert receipt.ingested == 1
    chunks = await stored_chunks(store, source.document_id)
    spans = [(int(str(chunk["startByte"])), int(str(chunk["endByte"]))) for chunk in chunks]
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans)), "a chunk starts inside the one before it"


def test_character_indices_become_byte_hints_that_are_checked_not_trusted() -> None:
    source = markdown_sources()[0]
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=16).get_nodes_from_documents([LlamaDocument(text=CAFE_GUIDE)])
    hinted = chunked_from_llamaindex(source, nodes)
    utf8 = CAFE_GUIDE.encode()
    for node, chunk in zip(nodes, hinted.chunks, strict=True):
        assert isinstance(node, TextNode) and chunk.start_byte is not None and chunk.end_byte is not None
        assert utf8[chunk.start_byte : chunk.end_byte].decode() == node.text
        # Past the first accented letter, byte offsets run ahead of character offsets.
        if node.start_char_idx:
            assert chunk.start_byte > node.start_char_idx
    for node in nodes:
        if isinstance(node, TextNode):
            node.start_char_idx, node.end_char_idx = 0, 5  # a span that lies
    recovered = place(utf8, chunked_from_llamaindex(source, nodes).chunks)
    assert recovered.counts.given == 0 and recovered.counts.exact == len(nodes)
    assert recovered.spans == [(c.start_byte, c.end_byte) for c in hinted.chunks]


def test_the_fingerprint_changes_with_the_parsers_settings() -> None:
    one = llamaindex_fingerprint(SentenceSplitter(chunk_size=64, chunk_overlap=16))
    assert one == llamaindex_fingerprint(SentenceSplitter(chunk_size=64, chunk_overlap=16))
    assert one != llamaindex_fingerprint(SentenceSplitter(chunk_size=64, chunk_overlap=8))
    assert one != llamaindex_fingerprint(MarkdownNodeParser())


def test_an_item_that_is_not_a_node_is_refused_with_a_code() -> None:
    with pytest.raises(ConfigurationError) as refused:
        chunked_from_llamaindex(markdown_sources()[0], [TextNode(text="x"), "y"])  # type: ignore[list-item]
    assert refused.value.code == "invalid-source" and "node 1" in refused.value.message
