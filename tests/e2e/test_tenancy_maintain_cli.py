"""The maintenance commands of a tenanted graph (issue 31, item 3; docs/tenancy.md, docs/maintain.md).

Each command is the real console script, bound with ``--tenant``: its previews print the tenant's
counts only (the same whether or not other tenants hold near-identical documents), and
``remove-tenant`` removes the tenant whole, leaving every other tenant byte-identical, also
when it is killed midway and run again.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from graphrag_orm import GraphRag, Sources
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import EmbeddingSet
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError, TenantError
from graphrag_orm.maintenance.tenants import tenants_overview
from graphrag_orm.reembedding import Reembedding
from graphrag_orm.store import Store
from graphrag_orm.tenancy import TENANCY_ENV, TENANT_ENV
from tests.integration.test_tenancy_maintenance import (
    assert_nothing_of,
    document_shapes,
    everything_but,
    held,
    sources,
    stored_ids,
    tenants,  # noqa: F401 (the fixture)
)
from tests.support.tenancy import TENANTED

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")


def environment(tenanted: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (TENANT_ENV, TENANCY_ENV, "OPENAI_API_KEY")}
    env.update({"COLUMNS": "160", "GRAPHRAG_EMBEDDING_MODEL": "hashing", "PYTHONPATH": str(ROOT)})
    if tenanted:
        env[TENANCY_ENV] = "required"
    return env


async def cli(*args: str, stdin: str = "", tenanted: bool = True) -> tuple[int, str, str]:
    """The console script in its own process: exit code, standard output, standard error."""
    process = await asyncio.create_subprocess_exec(
        CLI,
        *args,
        cwd=ROOT,
        env=environment(tenanted),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=300)
    assert process.returncode is not None
    assert "Traceback" not in out.decode() + err.decode()
    return process.returncode, out.decode(), err.decode()


async def test_remove_tenant_counts_asks_and_removes_only_its_tenant(
    tenants: dict[str, GraphRag],  # noqa: F811 (the fixture)
    store: Store,
) -> None:
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name, extra=1 if name == "acme" else 3))
    before = await everything_but(store, "acme")
    everything = await everything_but(store, "nobody")
    code, out, _ = await cli("--tenant", "acme", "remove-tenant", "--dry-run")
    assert code == 0
    assert out.strip() == "tenant acme holds 3 documents, 4 sections, 5 chunks, 1 run and 0 leases"
    code, out, _ = await cli("--tenant", "acme", "remove-tenant", stdin="n\n")
    assert code == 1 and "remove tenant acme whole?" in out
    assert await everything_but(store, "nobody") == everything  # a preview and a no change nothing
    code, out, _ = await cli("--tenant", "acme", "remove-tenant", "--yes", "--batch-size", "2")
    assert code == 0, out
    assert "removed 3 documents, 4 sections, 5 chunks, 1 run and 0 leases of tenant acme in 2 batches" in out
    assert await held(store, "acme") == 0
    assert await everything_but(store, "acme") == before


@pytest.mark.parametrize("size", ["0", "1001"])
def test_a_batch_size_outside_its_bounds_is_one_coded_line(size: str) -> None:
    import subprocess

    done = subprocess.run(
        [CLI, "--tenant", "acme", "remove-tenant", "--yes", "--batch-size", size],
        cwd=ROOT,
        env=environment() | {"NEO4J_URI": "bolt://127.0.0.1:1"},  # refused before connecting
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("(invalid-option)"), done.stderr


async def test_remove_tenant_in_an_untenanted_graph_is_refused(graph: None) -> None:
    code, _, err = await cli("--tenant", "acme", "remove-tenant", "--yes", tenanted=False)
    assert code == 1 and err.strip().endswith("(invalid-option)") and len(err.strip().splitlines()) == 1


async def test_the_previews_and_health_of_a_tenant_show_nothing_of_another(
    tenants: dict[str, GraphRag],  # noqa: F811 (the fixture)
    store: Store,
) -> None:
    await tenants["acme"].ingestion.ingest(sources("acme"))

    async def shown() -> list[str]:
        outputs = []
        for args, stdin in ((["reset"], "n\n"), (["remove-tenant", "--dry-run"], ""), (["check"], "")):
            code, out, err = await cli("--tenant", "acme", *args, stdin=stdin)
            assert code in (0, 1) and not err.strip(), err
            outputs.append(out)
        return outputs

    alone = await shown()
    assert alone[0].startswith("this removes every document of tenant acme: 2 documents, 4 sections and 4 chunks")
    for name in ("globex", "initech"):
        await tenants[name].ingestion.ingest(sources(name, extra=2))
    await store.execute(  # another tenant's graph needs care: none of it is acme's to see
        "MATCH (d:Document {tenant: 'globex', sourceUri: 'text:hours'}) DETACH DELETE d"
    )
    again = await shown()
    assert again == alone
    for name in ("globex", "initech"):
        assert_nothing_of(name, "\n".join(again), await stored_ids(store, name))


async def test_remove_tenant_killed_midway_leaves_whole_documents_and_a_second_run_finishes(
    tenants: dict[str, GraphRag],  # noqa: F811 (the fixture)
    store: Store,
) -> None:
    acme = tenants["acme"]
    notes = [
        Sources.text(f"note-{i}", f"# Note {i}\n\nThe note {i} of acme.\n\n## More\n\nMore {i}.\n") for i in range(60)
    ]
    await acme.ingestion.ingest(notes)
    for name in ("globex", "initech"):
        await tenants[name].ingestion.ingest(sources(name))
    before = await everything_but(store, "acme")
    shapes = await document_shapes(store, "acme")
    worker = await asyncio.create_subprocess_exec(
        CLI,
        "--tenant",
        "acme",
        "remove-tenant",
        "--yes",
        "--batch-size",
        "1",
        cwd=ROOT,
        env=environment(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while len(await document_shapes(store, "acme")) == len(shapes):
            assert worker.returncode is None, await worker.communicate()
            assert time.monotonic() < deadline, "the command committed no batch within 120 s"
            await asyncio.sleep(0.005)
        worker.send_signal(signal.SIGKILL)
    finally:
        await asyncio.wait_for(worker.wait(), timeout=30)
    assert worker.returncode == -signal.SIGKILL
    left = await document_shapes(store, "acme")
    assert 0 < len(left) < len(shapes), "the kill came after the whole removal"
    assert all(left[key] == shapes[key] for key in left)  # each document whole or gone
    orphans = await store.read(
        "MATCH (n {tenant: 'acme'}) WHERE (n:Section OR n:Chunk) "
        "AND NOT EXISTS { MATCH (d:Document {id: n.documentId, tenant: 'acme'}) } RETURN count(n) AS n"
    )
    assert orphans.value("n") == 0
    assert await everything_but(store, "acme") == before
    code, out, _ = await cli("--tenant", "acme", "remove-tenant", "--yes")
    assert code == 0, out
    assert f"removed {len(left)} documents" in out
    assert await held(store, "acme") == 0
    assert await everything_but(store, "acme") == before


TO_SET = ("--to-model", "graphrag-orm/hashing-v1", "--to-dimensions", "96")


async def test_each_tenant_reembeds_its_own_and_status_says_when_to_cut_over(
    tenants: dict[str, GraphRag],  # noqa: F811 (the fixture)
    store: Store,
) -> None:
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name, extra=1))
    to_set = EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=96)
    for step in Reembedding(tenants["acme"].store).plan(TENANTED, OFFLINE_EMBEDDING_SET, to_set).prepare_steps():
        await store.execute(step.cypher())  # the application's reviewed revision, applied directly
    await store.execute("CALL db.awaitIndexes(300)")
    counts = {name: await held_chunks(store, name) for name in tenants}

    # The plan's subcommands are a tenant's; status is the operator's, across tenants.
    code, _, err = await cli("reembed", "backfill", *TO_SET)
    assert code == 1 and err.strip().endswith("(tenant-required)")
    code, _, err = await cli("--tenant", "acme", "reembed", "status", *TO_SET)
    assert code == 1 and err.strip().endswith("(tenant-refused)")
    code, out, _ = await cli("reembed", "status", *TO_SET)
    assert code == 2, out
    for name, chunks in counts.items():
        assert f"  {name}: {chunks} chunks, {chunks} to do, 0 backfilled" in out
    assert f"3 tenants, 3 with chunks to do, {sum(counts.values())} chunks to do" in out
    assert "do not cut over yet" in out

    others = await everything_but(store, "acme")
    code, out, _ = await cli("--tenant", "acme", "reembed", "backfill", *TO_SET)
    assert code == 0, out
    assert f"backfilled {counts['acme']} chunks" in out and "tenant acme is backfilled" in out
    assert await everything_but(store, "acme") == others  # no other tenant's chunk was read or written
    code, out, _ = await cli("reembed", "status", *TO_SET, "--limit", "1", "--json")
    assert code == 2
    progress = json.loads(out)
    assert [entry["tenant"] for entry in progress["shown"]] == ["acme"]
    assert progress["shown"][0]["toDo"] == 0 and progress["shown"][0]["backfilled"] == counts["acme"]
    assert (progress["tenants"], progress["waiting"]) == (3, 2)
    assert [limit["name"] for limit in progress["limitsReached"]] == ["MaxListed"]

    for name in ("globex", "initech"):
        code, out, _ = await cli("--tenant", name, "reembed", "backfill", *TO_SET)
        assert code == 0, out
    code, out, _ = await cli("reembed", "status", *TO_SET)
    assert code == 0 and "3 tenants, 0 with chunks to do, 0 chunks to do" in out
    assert "every chunk is backfilled: cut over" in out

    # A chunk without a tenant (written before the graph was tenanted) is no tenant's to backfill.
    await store.execute("CREATE (:Chunk {id: 'stray', text: 'written before tenancy'})")
    code, out, _ = await cli("reembed", "status", *TO_SET)
    assert code == 2 and "1 chunk without a tenant" in out and "do not cut over yet" in out


async def held_chunks(store: Store, tenant: str) -> int:
    result = await store.read("MATCH (c:Chunk {tenant: $t}) RETURN count(c) AS n", {"t": tenant})
    return int(result.value("n"))


async def test_the_operator_lists_every_tenant_and_the_nodes_of_none(
    tenants: dict[str, GraphRag],  # noqa: F811 (the fixture)
    store: Store,
) -> None:
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name, extra=1 if name == "acme" else 3))
    expected = {name: await tenants[name].maintenance.preview_tenant() for name in tenants}
    overview = await tenants_overview(store, TENANTED, limit=2)
    assert overview.tenants == len(tenants) and overview.clean
    assert [entry.tenant for entry in overview.shown] == sorted(tenants)[:2]
    for entry in overview.shown:
        assert entry.model_dump(exclude={"tenant"}) == expected[str(entry.tenant)].model_dump()
    assert [limit.name for limit in overview.limits_reached] == ["MaxListed"]

    # A chunk and a document written without a tenant: no tenant's maintenance reaches them.
    await store.execute("CREATE (:Document {id: 'stray-document'}), (:Chunk {id: 'stray-chunk'})")
    code, out, _ = await cli("tenants")
    assert code == 2
    lines = out.strip().splitlines()
    assert lines[-2] == f"{len(tenants)} tenants"
    assert lines[-1] == "without a tenant: 1 document, 0 sections, 1 chunk, 0 runs and 0 leases"
    assert lines[0].strip().startswith("acme: 3 documents")
    code, out, _ = await cli("tenants", "--json")
    listed = json.loads(out)
    assert code == 2 and listed["tenants"] == len(tenants) and listed["untenanted"]["chunks"] == 1
    # Nothing in it but counts and tenant ids: no text, title, URI or node id.
    assert "stray" not in out and "text:" not in out and "handbook" not in out.lower()

    # A tenant's store, a tenant given on the command line, an untenanted graph: refused, nothing read.
    with pytest.raises(TenantError) as bound:
        await tenants_overview(tenants["acme"].store, TENANTED)
    assert bound.value.code == ErrorCode.TENANT_REFUSED
    code, _, err = await cli("--tenant", "acme", "tenants")
    assert code == 1 and err.strip().endswith("(tenant-refused)")
    code, _, err = await cli("tenants", tenanted=False)
    assert code == 1 and err.strip().endswith("(invalid-option)")
    with pytest.raises(ConfigurationError):
        await tenants_overview(store, TENANTED.replace(tenancy="off"))
