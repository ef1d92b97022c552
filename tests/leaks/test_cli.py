"""The command line bound to one tenant: ``ask``, ``search``, ``documents``, ``runs``, ``show`` and ``eval``
print nothing of the other tenant, on stdout or stderr.

Each command runs in-process (typer's runner, in a thread: each runs its own event loop)
in an environment that names the other tenant (GRAPHRAG_TENANT) and with ``--tenant``
naming OWN: a command that ignored ``--tenant`` would read the other tenant's documents.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from typer.testing import CliRunner, Result

from graphrag_orm.cli import app
from graphrag_orm.store import Store
from graphrag_orm.store.neomodel import attach_neomodel
from graphrag_orm.tenancy import TENANCY_ENV, TENANT_ENV
from tests.leaks.corpus import (
    BY_SECRET,
    DOCUMENTS,
    OTHER,
    OWN,
    PROBES,
    SECRETS,
    SHOWN_ID,
    TERMS,
    VAULT,
    Leaks,
    handbook_id,
    without_echo,
)
from tests.support.tenancy import sent_tenants


@pytest_asyncio.fixture(scope="module", autouse=True)
async def neomodel_restored(store: Store) -> AsyncIterator[None]:
    yield
    await attach_neomodel(store.driver, store.database)  # a command's connect pointed neomodel at its own driver


async def cli(*args: str, tenant: str | None = OWN, answers: str | None = None) -> Result:
    """``graphrag-orm [--tenant OWN] ARGS`` in a tenanted graph whose environment names the other
    tenant; ``answers`` is what is typed at its prompts."""
    given = ["--tenant", tenant] if tenant is not None else []
    environment = {TENANCY_ENV: "required", TENANT_ENV: OTHER if tenant is not None else None}
    runner = CliRunner()
    return await asyncio.to_thread(lambda: runner.invoke(app, [*given, *args], input=answers, env=environment))


async def test_ask_prints_nothing_of_the_other_tenant(leaks: Leaks) -> None:
    for probe in PROBES:
        for shown in ([], ["--json"]):
            result = await cli("ask", probe, *shown)
            assert result.exit_code in (0, 2), result.output  # answered, or refused
            leaks.assert_none(result.output, asked=[probe])
            if probe == VAULT:
                assert result.exit_code == 0 and SECRETS[OWN] in result.output, result.output
    # Scoped to the other tenant's document by its id: nothing is found (exit 2: a refusal).
    scoped = await cli("ask", VAULT, "--scope-document", handbook_id(OTHER), "--json")
    assert scoped.exit_code == 2, scoped.output
    assert json.loads(scoped.stdout)["answer"]["reason"] == "no-evidence"
    leaks.assert_none(scoped.output, asked=[handbook_id(OTHER)])


async def test_search_prints_nothing_of_the_other_tenant(leaks: Leaks) -> None:
    for probe in PROBES:
        for shown in ([], ["--json"]):
            result = await cli("search", probe, *shown)
            assert result.exit_code == 0, result.output
            leaks.assert_none(result.output, asked=[probe])
            if probe == VAULT:
                assert SECRETS[OWN] in result.output
    scoped = await cli("search", VAULT, "--scope-document", handbook_id(OTHER), "--json")
    assert scoped.exit_code == 0 and json.loads(scoped.stdout)["items"] == [], scoped.output
    leaks.assert_none(scoped.output, asked=[handbook_id(OTHER)])


async def test_the_catalog_commands_list_and_show_only_its_own(leaks: Leaks) -> None:
    listed = await cli("documents", "--json")
    documents = json.loads(listed.stdout)
    assert documents["total"] == DOCUMENTS[OWN] and {item["id"] for item in documents["documents"]} <= leaks.own_ids
    table = await cli("documents")
    assert handbook_id(OWN)[:SHOWN_ID] in table.stdout and f"{DOCUMENTS[OWN]} documents" in table.stdout
    first = await cli("documents", "--limit", "1")
    assert f"showing 1 of {DOCUMENTS[OWN]}" in first.stdout, first.output
    runs = await cli("runs", "--json")
    assert json.loads(runs.stdout)["total"] == 1
    shown = [await cli("show", "text:handbook", *json_or_not) for json_or_not in ([], ["--json"])]
    assert handbook_id(OWN) in shown[0].stdout and json.loads(shown[1].stdout)["id"] == handbook_id(OWN)
    for result in (listed, table, first, runs, await cli("runs"), *shown):
        assert result.exit_code == 0, result.output
        leaks.assert_none(result.output)


@pytest.mark.parametrize("reference", ["id", "prefix", "uri"])
async def test_show_names_the_other_tenants_document_not_found(leaks: Leaks, reference: str) -> None:
    theirs = {"id": handbook_id(OTHER), "prefix": handbook_id(OTHER)[:SHOWN_ID], "uri": "text:ledger"}[reference]
    result = await cli("show", theirs)
    assert result.exit_code == 1 and result.stderr.strip().endswith("(document-not-found)"), result.output
    leaks.assert_none(result.output, asked=[theirs])


async def test_eval_reports_nothing_of_the_other_tenant(leaks: Leaks, tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    lines = [
        {"id": "own", "question": VAULT, "answerable": True, "requiredPhrases": [SECRETS[OWN]]},
        {
            "id": "theirs",
            "question": BY_SECRET,
            "answerable": True,
            "requiredPhrases": [SECRETS[OTHER], TERMS[OTHER]],
            "expectedDocuments": [handbook_id(OTHER), "text:ledger"],
        },
    ]
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = await cli("eval", str(cases), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    own, theirs = report["cases"]
    assert own["phrasesFound"] == [True] and SECRETS[OWN] in (own["answer"] or "")
    assert theirs["phrasesFound"] == [False, False] and theirs["documentsFound"] == [False, False]
    # The cases' own words (the other tenant's secret and ids, as the caller wrote them) are echoed.
    leaks.assert_none(without_echo(report, ("question", "requiredPhrases", "expectedDocuments")))
    leaks.assert_none(result.stderr)


@pytest.mark.parametrize(
    "args",
    [["ask", VAULT], ["search", VAULT], ["documents"], ["runs"], ["show", "text:handbook"], ["eval", "cases.jsonl"]],
    ids=lambda args: args[0],
)
async def test_without_a_tenant_a_command_is_refused_before_any_statement(
    monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    sent = sent_tenants(monkeypatch)
    result = await cli(*args, tenant=None)
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("(tenant-required)") and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output and sent == []
