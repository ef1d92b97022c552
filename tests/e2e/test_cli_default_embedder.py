"""With the ``local`` extra installed and no embedding variable set, the command line runs the local model.

One ``migrations apply`` (no ``--dir``, no ``init``) builds the vector index of the local
model's set as a recorded revision; ingest and ask say which embedder they used; the
stand-in configured against that graph is refused with one coded line naming the set and
the variable that selects it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.store import Store

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")
QUICKSTART = ROOT / "examples" / "quickstart" / "docs"
NAMED = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS")


def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """The command as a user with no embedding variable runs it (the suite's Neo4j settings kept)."""
    environment = {name: value for name, value in os.environ.items() if name not in NAMED}
    environment.pop("GRAPHRAG_MIGRATIONS_DIR", None)
    environment.update(COLUMNS="160", **extra)
    return subprocess.run([CLI, *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)


async def test_one_apply_builds_the_local_models_index_and_ingest_and_ask_use_it(
    bare_database: None, store: Store
) -> None:
    assert LocalEmbedder.installed(), "the dev venv installs the local extra"
    applied = cli("migrations", "apply")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "e5-small-v2-int8:384:cosine" in applied.stdout
    assert "0004_embedding_384_cosine_" in applied.stdout

    status = cli("migrations", "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert "0004_embedding_384_cosine_" in status.stdout and "applied" in status.stdout
    journal = await store.read(
        "MATCH (m:GraphRagMigration) WHERE m.revision STARTS WITH '0002_' RETURN m.checksum AS checksum",
        name="test.journal",
    )
    assert len(journal) == 1 and str(journal.records[0]["checksum"]).startswith("sha256:")
    indexes = await store.read(
        "SHOW VECTOR INDEXES YIELD name, options RETURN name, options", name="test.vector_indexes"
    )
    assert [row["options"]["indexConfig"]["vector.dimensions"] for row in indexes] == [384]
    assert cli("migrations", "apply").stdout.strip().endswith("nothing to apply: the database is at the chain's head")

    ingested = cli("ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/")
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert "embedded by LocalEmbedder" in ingested.stdout
    assert "chunks cut" not in ingested.stdout

    asked = cli("ask", "How many items can a member borrow at a time?")
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert "embedded by LocalEmbedder" in asked.stdout

    mismatch = cli("ingest", str(QUICKSTART), GRAPHRAG_EMBEDDING_MODEL="hashing")
    assert mismatch.returncode != 0 and "Traceback" not in mismatch.stderr
    (line,) = [line for line in mismatch.stderr.splitlines() if line.strip()]
    assert "(embedding-dimensions)" in line and "GRAPHRAG_EMBEDDING_MODEL" in line
    assert "graphrag-orm/hashing-v1:256:cosine" in line and "384" in line


def long_paragraphs(word: str) -> str:
    """Four paragraphs of about 5.6 KB each, dense in word pieces (2 KB of one is some 1,100):
    far over the default model's 512 whatever the chunk size."""
    words = " ".join(f"{word}-{n}/q{n % 7}x.{n % 3}k" for n in range(300))
    return "\n\n".join(f"Paragraph {n} runs on: {words}." for n in range(4))


async def chunk_tokens(store: Store, base_uri: str) -> list[int]:
    """The local model's token count of each stored chunk of the documents under ``base_uri``."""
    rows = await store.read(
        "MATCH (c:Chunk)-[:IN_DOCUMENT]->(d:Document) WHERE d.sourceUri STARTS WITH $base RETURN c.text AS text",
        {"base": base_uri},
        name="test.chunk_texts",
    )
    local = LocalEmbedder()
    return [local.count_tokens(row["text"]) for row in rows]


async def test_long_chunks_are_embedded_whole_by_default_and_nothing_is_reported_cut(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    assert cli("migrations", "apply").returncode == 0
    (tmp_path / "long").mkdir()
    (tmp_path / "long" / "long.md").write_text(long_paragraphs("lantern"), encoding="utf-8")
    args = ("ingest", str(tmp_path / "long"), "--base-uri", "https://example.org/long/")
    for flags in ((), ("--no-fit-chunks",)):
        preview = cli(*args, "--preview", *flags)
        assert preview.returncode == 0 and " cut" not in preview.stdout, preview.stdout + preview.stderr
    ingested = cli(*args)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert "embedded by LocalEmbedder" in ingested.stdout and " cut" not in ingested.stdout
    assert "EmbedderWindow" not in ingested.stdout
    counts = await chunk_tokens(store, "https://example.org/long/")
    # The chunks keep the chunker's size: longer than the model's window, their windows pooled.
    assert len(counts) >= 2 and max(counts) > LocalEmbedder().window_tokens


async def test_apply_refuses_to_replace_the_index_under_chunks_the_stand_in_embedded(
    bare_database: None, store: Store
) -> None:
    assert cli("migrations", "apply", GRAPHRAG_EMBEDDING_MODEL="hashing").returncode == 0
    ingested = cli("ingest", str(QUICKSTART), GRAPHRAG_EMBEDDING_MODEL="hashing")
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr

    refused = cli("migrations", "apply")  # no variable: the local model's set
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    (line,) = [line for line in refused.stderr.splitlines() if line.strip()]
    assert "(embedding-dimensions)" in line and "GRAPHRAG_EMBEDDING_MODEL" in line
    assert "graphrag-orm/hashing-v1:256:cosine" in line and "e5-small-v2-int8:384:cosine" in line
    journal = await store.read("MATCH (m:GraphRagMigration) RETURN m.revision AS revision", name="test.journal")
    # The toolkit's chain as the stand-in's apply left it: no embedding revision was added.
    assert sorted(row["revision"] for row in journal) == [
        "0001_lexical_schema",
        "0002_communities",
        "0003_community_reports",
    ]
    indexes = await store.read("SHOW VECTOR INDEXES YIELD options RETURN options", name="test.vector_indexes")
    assert [row["options"]["indexConfig"]["vector.dimensions"] for row in indexes] == [256]
    assert (
        cli("ask", "How many items can a member borrow at a time?", GRAPHRAG_EMBEDDING_MODEL="hashing").returncode == 0
    )
