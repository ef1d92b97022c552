"""The command line of a tenanted graph (docs/tenancy.md): ``--tenant`` / GRAPHRAG_TENANT binds every
command that opens the graph; without one, such a command fails with one coded line and
writes nothing.

Refusals run the real console script (exit code, one line, no traceback); what a bound
command sends is read in-process (typer's runner), where the ``$tenant`` of every statement
is recorded (``tests.support.tenancy.sent_tenants``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphrag_orm.cli import app
from graphrag_orm.store import Store
from graphrag_orm.store.neomodel import attach_neomodel
from graphrag_orm.tenancy import TENANCY_ENV, TENANT_ENV
from tests.support.tenancy import sent_tenants

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")
QUICKSTART = ROOT / "examples" / "quickstart" / "docs"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in (TENANT_ENV, TENANCY_ENV, "OPENAI_API_KEY")}
    environment.update({"COLUMNS": "160", "GRAPHRAG_EMBEDDING_MODEL": "hashing", "PYTHONPATH": str(ROOT), **env})
    return subprocess.run([CLI, *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)


async def documents_stored(store: Store) -> int:
    return int((await store.read("MATCH (d:Document) RETURN count(d) AS n")).value("n"))


@pytest.mark.parametrize(
    "args",
    [
        ["ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/"],
        ["documents"],
        ["search", "laser cutter"],
        ["ask", "How many items can a member borrow?"],
        ["check"],
        ["resolve", "suggest", "--ontology", "generic"],  # entity resolution is the tenant's
        ["serve", "--host", "256.0.0.1"],  # unbindable: untenanted it fails fast with another code
    ],
    ids=lambda args: args[0],
)
async def test_a_tenanted_graph_refuses_a_command_without_a_tenant_and_writes_nothing(
    graph: None, store: Store, args: list[str]
) -> None:
    refused = cli(*args, env={TENANCY_ENV: "required"})
    assert refused.returncode == 1, refused.stdout + refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("(tenant-required)"), refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr
    assert await documents_stored(store) == 0


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_value_that_is_no_tenant_is_one_coded_line(how: str) -> None:
    bad = "acme corp;DROP"
    given = ["--tenant", bad] if how == "option" else []
    refused = cli(*given, "documents", env={} if how == "option" else {TENANT_ENV: bad})
    assert refused.returncode == 1
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("(invalid-tenant)"), refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("graph", "ask", "Who borrows most?"),
    ],
    ids=["graph"],
)
def test_commands_a_tenanted_graph_cannot_fence_are_refused_whatever_the_tenant(command: tuple[str, ...]) -> None:
    refused = cli("--tenant", "acme", *command, env={TENANCY_ENV: "required"})
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.strip().endswith("(tenant-refused)") and len(refused.stderr.strip().splitlines()) == 1
    assert "Traceback" not in refused.stdout + refused.stderr


def test_administrative_commands_need_no_tenant(tenanted_graph: None) -> None:
    done = cli("migrations", "status", env={TENANCY_ENV: "required"})
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("how", ["option", "environment"])
async def test_a_bound_command_sends_every_statement_with_its_tenant(
    tenanted_graph: None, store: Store, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv(TENANCY_ENV, "required")
    monkeypatch.setenv(TENANT_ENV, "placeholder")  # restored after the test: the command sets it
    monkeypatch.delenv(TENANT_ENV)
    sent = sent_tenants(monkeypatch)
    runner = CliRunner()
    commands = (
        ["ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/", "--json"],
        ["documents"],
        ["search", "maker space laser cutter"],
    )
    try:
        for args in commands:
            # In a thread: each command runs its own event loop, as in its own process.
            if how == "option":
                result = await asyncio.to_thread(runner.invoke, app, ["--tenant", "acme", *args])
            else:
                result = await asyncio.to_thread(runner.invoke, app, args, env={TENANT_ENV: "acme"})
            assert result.exit_code == 0, result.output
    finally:
        await attach_neomodel(store.driver, store.database)  # ingest pointed neomodel at its own driver
    assert sent and {tenant for _, tenant in sent} == {"acme"}
    assert await documents_stored(store) == 3


async def test_migrations_apply_builds_a_tenanted_graph_its_commands_then_use(
    bare_database: None, store: Store
) -> None:
    tenanted = {TENANCY_ENV: "required"}
    applied = cli("migrations", "apply", env=tenanted)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "0004_tenancy" in applied.stdout and "+ graphrag_orm.migrations/tenancy" in applied.stdout, applied.stdout
    # The composite key that makes one source URI two documents in two tenants is there.
    keyed = await store.read(
        "SHOW CONSTRAINTS YIELD name WHERE name = 'graphrag_document_tenant_source_uri_unique' RETURN count(*) AS n"
    )
    assert int(keyed.value("n")) == 1
    assert cli("migrations", "check", env=tenanted).returncode == 0
    untenanted = cli("migrations", "check", env={})
    assert (
        untenanted.returncode == 1 and "unexpected" in untenanted.stdout
    )  # the tenant's schema is not the plain chain's
    for tenant in ("acme", "globex"):
        ingested = cli(
            "--tenant", tenant, "ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/", env=tenanted
        )
        assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    per_tenant = int((await store.read("MATCH (d:Document {tenant: 'acme'}) RETURN count(d) AS n")).value("n"))
    assert per_tenant > 0 and await documents_stored(store) == 2 * per_tenant  # the same URIs, twice
    asked = cli("--tenant", "acme", "ask", "How many items can a member borrow at a time?", env=tenanted)
    assert asked.returncode == 0, asked.stdout + asked.stderr
