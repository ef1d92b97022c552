"""``graphrag-orm communities build|refresh|reports|list`` as a user runs them, over the recall wiki's knowledge graph."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from examples.recall.bikes import BIKES, extraction_reply
from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.store import Store
from tests.e2e.test_cli import ROOT, cli
from tests.integration.knowledge_support import ontology_schema

WIKI = ROOT / "examples" / "recall" / "wiki"
# The recall sample's ontology, importable by the command line from the repository's root.
ONTOLOGY = ("--ontology", "examples.recall.bikes:BIKES")
ENV = {"PYTHONPATH": str(ROOT)}


@pytest.fixture
async def wiki(store: Store, graph: None) -> AsyncIterator[None]:
    async with ontology_schema(store, BIKES):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ScriptedChat(extraction_reply),
            ontology=BIKES,
        )
        rag.store.bind(store.driver, store.database)
        pages: list[Path] = sorted(WIKI.glob("*.md"))
        receipt = await rag.ingestion.ingest(
            [Sources.file(p, uri=f"https://example.org/recall/{p.stem}") for p in pages]
        )
        assert receipt.failed == 0
        yield


def test_build_then_list_prints_the_same_communities(wiki: None) -> None:
    built = json.loads(cli("communities", "build", *ONTOLOGY, "--json", env=ENV, check=True).stdout)
    assert built["communities"] > 0 and built["limitsReached"] == []
    assert built["reports"]["reports"] > 0 and built["reports"]["writer"] == "extractive-stand-in"
    listed = json.loads(cli("communities", "list", *ONTOLOGY, "--json", env=ENV, check=True).stdout)
    assert len(listed["communities"]) == built["communities"]
    assert len(listed["reports"]["reports"]) == built["reports"]["reports"]
    cited = listed["reports"]["reports"][0]["findings"][0]["citations"][0]
    shown = cli("communities", "list", *ONTOLOGY, "--findings", env=ENV, check=True).stdout
    assert cited["chunkId"] in shown and cited["quote"] in shown
    shown = cli("communities", "build", *ONTOLOGY, "--max-facts", "2", env=ENV, check=True).stdout
    assert "limit reached CommunityFacts (2)" in shown
    small = cli("communities", "build", *ONTOLOGY, "--transaction-rows", "1", "--json", env=ENV, check=True)
    assert json.loads(small.stdout)["transactions"] > built["transactions"]
    refused = cli("communities", "build", *ONTOLOGY, "--transaction-rows", "0", env=ENV)
    assert refused.returncode == 1 and "invalid-option" in refused.stderr and "Traceback" not in refused.stderr


def test_refresh_keeps_the_reports_of_what_did_not_change_and_writes_the_others(wiki: None) -> None:
    built = json.loads(cli("communities", "build", *ONTOLOGY, "--json", env=ENV, check=True).stdout)
    total = built["reports"]["reports"]
    same = json.loads(cli("communities", "refresh", *ONTOLOGY, "--json", env=ENV, check=True).stdout)
    assert (same["reportsKept"], same["reportsRemoved"], same["reports"]["reports"]) == (total, 0, 0)
    assert same["communities"] == built["communities"]
    listed = json.loads(cli("communities", "list", *ONTOLOGY, "--json", env=ENV, check=True).stdout)
    document = listed["reports"]["reports"][0]["findings"][0]["citations"][0]["documentId"]
    cli("remove", document, *ONTOLOGY, env=ENV, check=True)
    stale = cli("check", *ONTOLOGY, env=ENV)
    assert stale.returncode == 1 and "stale-communities" in stale.stdout
    shown = cli("communities", "refresh", *ONTOLOGY, env=ENV, check=True).stdout
    assert "reports kept:" in shown and "cited findings by extractive-stand-in" in shown
    after = json.loads(cli("communities", "refresh", *ONTOLOGY, "--json", env=ENV, check=True).stdout)
    assert after["reportsRemoved"] == 0 and after["reports"]["reports"] == 0, "a second refresh keeps everything"
    assert "stale-communities" not in cli("check", *ONTOLOGY, env=ENV).stdout


def test_build_without_an_ontology_or_with_a_bound_out_of_range_is_refused_with_a_code(graph: None) -> None:
    missing = cli("communities", "build")
    assert missing.returncode == 1 and "invalid-option" in missing.stderr and "Traceback" not in missing.stderr
    bad = cli("communities", "build", "--ontology", "novel", "--max-levels", "9")
    assert bad.returncode == 1 and "invalid-option" in bad.stderr and "Traceback" not in bad.stderr


def test_reports_are_previewed_and_written_again_and_the_model_writer_needs_a_model(wiki: None) -> None:
    assert cli("communities", "build", *ONTOLOGY, "--reports", "none", env=ENV, check=True).returncode == 0
    preview = json.loads(cli("communities", "reports", *ONTOLOGY, "--preview", "--json", env=ENV, check=True).stdout)
    assert preview["communities"] > 0 and preview["calls"] == 0
    written = cli("communities", "reports", *ONTOLOGY, env=ENV, check=True).stdout
    assert "cited findings by extractive-stand-in" in written
    offline = cli("communities", "reports", *ONTOLOGY, "--writer", "model", env=ENV)
    assert offline.returncode == 1 and "invalid-option" in offline.stderr and "Traceback" not in offline.stderr


def test_ask_global_answers_from_the_reports_or_refuses_with_a_code(wiki: None) -> None:
    cli("communities", "build", *ONTOLOGY, env=ENV, check=True)
    asked = cli("ask", "Which parts are supplied by Kestrel Components?", "--global", *ONTOLOGY, "--json", env=ENV)
    answer = json.loads(asked.stdout)
    assert asked.returncode == 0 and "supplied by Kestrel Components" in answer["answer"] and answer["citations"]
    shown = cli("ask", "Which parts are supplied by Kestrel Components?", "--global", *ONTOLOGY, env=ENV).stdout
    assert answer["citations"][0]["quote"][:40] in shown
    # Removing a cited document retracts, in its transaction, the findings it alone supported.
    removed_document = answer["citations"][0]["documentId"]
    removed = cli("remove", removed_document, *ONTOLOGY, env=ENV, check=True).stdout
    assert "community reports:" in removed and "retracted" in removed and "0 findings retracted" not in removed
    again = json.loads(
        cli("ask", "Which parts are supplied by Kestrel Components?", "--global", *ONTOLOGY, "--json", env=ENV).stdout
    )
    assert removed_document not in {citation["documentId"] for citation in again["citations"]}
    assert again["findingsDropped"] == 0
    refused = cli("ask", "When did the saffron fair open?", "--global", *ONTOLOGY, env=ENV)
    assert refused.returncode == 2 and "no-relevant-finding" in refused.stdout
    missing = cli("ask", "Which parts?", "--global", env=ENV)
    assert missing.returncode == 1 and "invalid-option" in missing.stderr and "Traceback" not in missing.stderr
