"""A separate ingestion process for the reliability tests (several workers, SIGKILL, a stopped server).

Usage: python -m tests.integration.ingest_worker FOLDER [--lease SECONDS] [--wait SECONDS] [--delay SECONDS] [--migrate]
Connects with NEO4J_* from the environment, ingests FOLDER's Markdown files (named by a
fixed base URI, so every worker computes the same document ids) and prints the receipt
as JSON on its last line.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import EmbeddingVectors, HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources
from graphrag_orm.store.connection import open_store

BASE_URI = "https://example.org/reliability/"
CHUNKER = ChunkerOptions(max_utf8_bytes=256, overlap_paragraphs=0)


class SlowEmbedder:
    """The offline embedder with a pause per call, so a run lasts long enough to interrupt."""

    def __init__(self, delay: float) -> None:
        self.inner = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
        self.delay = delay

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        await asyncio.sleep(self.delay)
        return await self.inner.embed(texts)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--lease", type=float, default=600.0)
    parser.add_argument("--wait", type=float, default=0.0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--migrate", action="store_true")
    args = parser.parse_args(argv)
    store = await open_store()
    try:
        if args.migrate:
            await Migrator(store, Chain.load()).apply()
        service = IngestionService(
            store,
            for_layout(Layout.DEFAULT),
            OFFLINE_EMBEDDING_SET,
            SlowEmbedder(args.delay),
            chunker=Chunker(CHUNKER),
            options=IngestionOptions(
                lease_duration_seconds=args.lease, wait_for_leases_seconds=args.wait, embedding_batch_size=4
            ),
        )
        receipt = await service.ingest(Sources.folder(args.folder, base_uri=BASE_URI))
        print(receipt.to_json(), flush=True)
    finally:
        await store.driver.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
