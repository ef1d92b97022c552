"""``graphrag-orm reembed plan|backfill|complete|cleanup`` run as a user runs them, on an application chain.

The graph is ingested with the offline set (the stand-in at 256 dimensions) through the
CLI; the new set is the stand-in at 128. The prepare and cleanup steps are written as
revisions of the application's chain and applied with ``migrations apply``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphrag_orm.store import Store

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")
QUICKSTART = ROOT / "examples" / "quickstart" / "docs"
TO = ("--to-model", "graphrag-orm/hashing-v1", "--to-dimensions", "128")
NEW_SET = "graphrag-orm/hashing-v1:128:cosine"


def cli(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "COLUMNS": "200"}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS"):
        environment.pop(name, None)
    environment["GRAPHRAG_EMBEDDING_MODEL"] = "hashing"  # the stand-in, named: the suite's schema is its set
    result = subprocess.run([CLI, *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


async def count(store: Store, cypher: str, parameters: dict[str, str] | None = None) -> int:
    return int((await store.read(cypher, parameters)).value("n", 0))


@pytest.fixture
def chain(bare_database: None, tmp_path: Path) -> Path:
    folder = tmp_path / "chain"
    cli("migrations", "init", str(folder), check=True)
    cli("migrations", "apply", "--dir", str(folder), check=True)
    cli("ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/", check=True)
    return folder


async def test_the_cli_plans_backfills_completes_and_cleans_up(chain: Path, store: Store) -> None:
    chunks = await count(store, "MATCH (c:Chunk) RETURN count(c) AS n")

    planned = cli("reembed", "plan", *TO, "--dir", str(chain), "--revision", "0002_reembed_prepare", check=True)
    assert f"stage Planned: {chunks} chunks, 0 backfilled, {chunks} to do" in planned.stdout
    assert "CREATE VECTOR INDEX graphrag_chunk_embedding_128_cosine_" in planned.stdout
    assert "FOR (n:Chunk) ON (n.embeddingNext)" in planned.stdout
    assert "DROP INDEX graphrag_chunk_embedding_256_cosine_" in planned.stdout
    written = json.loads((chain / "0002_reembed_prepare.json").read_text())
    assert written["down_revision"] == "0001_graphrag_schema"
    cli("migrations", "apply", "--dir", str(chain), check=True)

    first = cli("reembed", "backfill", *TO, "--page-size", "2", "--max-pages", "1", check=True)
    assert "backfilled 2 chunks in 1 page (1 embedding call, 0 retries" in first.stdout
    assert f"{chunks - 2} still to do; limits reached: MaxPages 1" in first.stdout
    assert "HashingEmbedder (128 dimensions)" in first.stdout
    health = cli("check")
    assert (
        health.returncode == 1 and "mixed-embedding-sets" in health.stdout and f"{NEW_SET} (staged): 2" in health.stdout
    )

    rest = json.loads(cli("reembed", "backfill", *TO, "--json", check=True).stdout)
    assert (rest["chunksEmbedded"], rest["chunksLeft"], rest["limitsReached"]) == (chunks - 2, 0, [])

    completed = cli("reembed", "complete", *TO, "--page-size", "5", check=True)
    assert f"completed {chunks} chunks in {-(-chunks // 5)} pages" in completed.stdout
    assert "0 not backfilled" in completed.stdout
    assert await count(store, "MATCH (c:Chunk {embeddingSetId: $s}) RETURN count(c) AS n", {"s": NEW_SET}) == chunks

    cleaned = cli("reembed", "cleanup", *TO, "--dir", str(chain), "--revision", "0003_reembed_cleanup", check=True)
    assert f"removed {chunks} old vectors" in cleaned.stdout and "0 chunks not completed keep theirs" in cleaned.stdout
    cli("migrations", "apply", "--dir", str(chain), check=True)
    assert await count(store, "MATCH (c:Chunk) WHERE c.embedding IS NOT NULL RETURN count(c) AS n") == 0

    final = cli("reembed", "plan", *TO, check=True)
    assert f"stage CleanedUp: {chunks} chunks, {chunks} backfilled, 0 to do, {chunks} completed" in final.stdout
    assert "(absent)" in final.stdout


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--to-model", "graphrag-orm/hashing-v1", "--to-dimensions", "256"), "same-embedding-set"),
        ((*TO, "--staging-property", "embedding"), "staging-property-in-use"),
        ((*TO, "--staging-property", "text"), "staging-property-in-use"),
        ((*TO, "--staging-property", "embedding next"), "invalid-layout"),
        (("--to-model", "text-embedding-3-small"), "invalid-option"),
        ((*TO, "--from-model", "m", "--from-dimensions", "99999"), "invalid-option"),
    ],
)
def test_bad_plans_fail_with_one_line_and_a_code(args: tuple[str, ...], code: str) -> None:
    result = cli("reembed", "plan", *args)
    assert result.returncode == 1
    assert f"({code})" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stdout + result.stderr


def test_a_provider_model_that_is_not_named_in_the_environment_is_refused() -> None:
    result = cli("reembed", "backfill", "--to-model", "text-embedding-3-small", "--to-dimensions", "1536")
    assert result.returncode == 1 and "(model-setting-missing)" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


async def test_a_backfill_before_the_prepare_revision_is_refused(chain: Path) -> None:
    result = cli("reembed", "backfill", *TO)
    assert result.returncode == 1 and "(schema-missing)" in result.stderr
