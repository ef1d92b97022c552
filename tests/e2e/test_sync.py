"""The blocking wrapper, in a process of its own (it runs its own event loop)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET

rag = GraphRag(embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(256), chat=ExtractiveChat())
with rag.sync().connect() as sync_rag:
    receipt = sync_rag.ingestion.ingest([Sources.text("sync-a", "The maker space opens at 14:00 on weekdays.")])
    print("ingested", receipt.ingested)
    print("answer", sync_rag.answers.answer("When does the maker space open?").text)
    updates = [type(u).__name__ for u in sync_rag.answers.stream("When does the maker space open?")]
    print("stream", updates[0], updates[-1])
"""


def test_sync_calls_block_and_streams_iterate(graph: None) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "ingested 1" in result.stdout
    assert "answer The maker space opens at 14:00 on weekdays." in result.stdout
    assert "stream Retrieved Completed" in result.stdout
