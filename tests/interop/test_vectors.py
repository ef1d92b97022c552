"""The other stack embeds with our HashingEmbedder: the same vectors, bit for bit."""

from __future__ import annotations

from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.store.connection import ConnectionSettings
from tests.interop.corpus import DOCUMENTS, QUESTIONS
from tests.interop.stack import DIMENSIONS, neo4j_graphrag


async def test_neo4j_graphrags_embedder_gives_our_hashing_vectors_exactly() -> None:
    texts = [*DOCUMENTS.values(), *QUESTIONS, "", "   ", "☕ 🌊", "東京の支店"]
    ours = [HashingEmbedder(DIMENSIONS).embed_one(text)[0] for text in texts]

    theirs = await neo4j_graphrag(
        {"command": "vectors", "texts": texts, "dimensions": DIMENSIONS}, ConnectionSettings()
    )

    assert theirs["vectors"] == ours
    assert len({tuple(vector) for vector in ours}) == len(texts) - 1  # "" and "   " share the fixed vector
