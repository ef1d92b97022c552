"""The Python surface bound to one tenant: retrieval, answers (with history carried from the other
tenant's turn), streaming, follow-ups and the catalog return nothing of the other tenant."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from graphrag_orm import GraphRag
from graphrag_orm.answers import Disposition, Turn
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import DocumentNotResolved
from graphrag_orm.evidence import Route
from graphrag_orm.retrieval import CypherExpansion, CypherScope, DocumentsScope, RetrievalOptions
from tests.leaks.corpus import (
    DOCUMENTS,
    OTHER,
    OWN,
    PROBES,
    SECRETS,
    VAULT,
    Leaks,
    found_own,
    handbook_id,
    serialised,
    without_echo,
)
from tests.support.tenancy import refused_unsent

ROUTES = {
    "vector": RetrievalOptions(routes=frozenset({Route.VECTOR})),
    "full-text": RetrievalOptions(routes=frozenset({Route.FULL_TEXT})),
    "hybrid": RetrievalOptions(neighbour_chunks=1, shared_votes=True),
}


@pytest.fixture(scope="module")
def own(at_hand: GraphRag) -> GraphRag:
    """OWN's view, made from the other tenant's facade."""
    return at_hand.for_tenant(OWN)


@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_retrieval_returns_nothing_of_the_other_tenant(own: GraphRag, leaks: Leaks, route: str) -> None:
    for probe in PROBES:
        evidence = await own.retriever.retrieve(probe, ROUTES[route])
        leaks.assert_none(evidence, asked=[probe])
        assert {item.chunk_id for item in evidence.items} <= leaks.own_ids
        if probe == VAULT:
            assert found_own(serialised(evidence)), route


async def test_a_scope_naming_the_other_tenants_documents_finds_nothing(own: GraphRag, leaks: Leaks) -> None:
    scope = DocumentsScope(document_ids=leaks.other_documents)
    evidence = await own.retriever.retrieve(VAULT, RetrievalOptions(scope=scope))
    assert evidence.items == () and evidence.scope is not None
    assert (evidence.scope.documents, evidence.scope.chunks) == (0, 0)
    leaks.assert_none(evidence)


# Vouched for OWN, but reading every tenant: the fence is all that stands between them.
CARELESS = {
    "expansion": RetrievalOptions(
        expansion=CypherExpansion(
            cypher="MATCH (d:Document)-[r]-(c:Chunk) RETURN d, r, c, c.id AS chunkId", vouched_tenant=OWN, max_rows=200
        )
    ),
    "scope": RetrievalOptions(
        scope=CypherScope(cypher="MATCH (d:Document) RETURN d.id AS documentId, d.title AS title", vouched_tenant=OWN)
    ),
}


@pytest.mark.parametrize("query", sorted(CARELESS))
async def test_vouched_cypher_that_reads_every_tenant_returns_nothing_of_the_other(
    own: GraphRag, leaks: Leaks, query: str
) -> None:
    evidence = await own.retriever.retrieve(VAULT, CARELESS[query])
    leaks.assert_none(evidence, asked=[VAULT])
    assert found_own(serialised(evidence))
    outside = LimitName.EXPANSION_OUTSIDE_TENANT if query == "expansion" else LimitName.SCOPE_OUTSIDE_TENANT
    assert any(lim.name == outside and int(lim.value) > 0 for lim in evidence.limits_reached)


async def answered(own: GraphRag, streamed: bool, question: str, history: tuple[Turn, ...]) -> list[Any]:
    """The answer (or every update of its stream) as JSON data."""
    assert own.answers is not None
    if not streamed:
        return [(await own.answers.answer(question, history=history)).model_dump(mode="json")]
    return [update.model_dump(mode="json") async for update in own.answers.stream(question, history=history)]


@pytest.mark.parametrize("streamed", [False, True], ids=["answer", "stream"])
async def test_answers_cite_nothing_of_the_other_tenant(own: GraphRag, leaks: Leaks, streamed: bool) -> None:
    for probe in PROBES:
        output = await answered(own, streamed, probe, ())
        leaks.assert_none(output, asked=[probe])
        if probe == VAULT:
            final = output[-1].get("answer", output[-1])
            assert final["disposition"] == Disposition.ANSWERED and SECRETS[OWN] in final["text"], final


@pytest.mark.parametrize("streamed", [False, True], ids=["answer", "stream"])
async def test_a_follow_up_with_the_other_tenants_turn_carried_in_finds_only_its_own(
    own: GraphRag, at_hand: GraphRag, leaks: Leaks, streamed: bool
) -> None:
    # The other tenant's real turn (its answer quotes its secret), carried into OWN's call:
    # the rewrite puts the other's words into OWN's question, and OWN's retrieval still reads only OWN's.
    assert at_hand.answers is not None
    theirs = await at_hand.answers.answer(VAULT)
    assert theirs.text is not None and SECRETS[OTHER] in theirs.text
    history = (Turn(question=VAULT, answer=theirs.text),)
    output = await answered(own, streamed, "And what is it here?", history)
    evidence = output[0]["evidence"]
    assert SECRETS[OTHER] in evidence["rewrite"]["standalone"]  # the other's words were asked
    leaks.assert_none(without_echo(output))
    final = output[-1].get("answer", output[-1])
    assert final["disposition"] == Disposition.ANSWERED and SECRETS[OWN] in final["text"], final


async def test_the_catalog_lists_shows_and_resolves_only_its_own(own: GraphRag, leaks: Leaks) -> None:
    listed = await own.catalog.documents()
    assert listed.total == DOCUMENTS[OWN] and {item.id for item in listed.documents} <= leaks.own_ids
    runs = await own.catalog.runs()
    assert runs.total == 1 and {item.id for item in runs.runs} <= leaks.own_ids
    detail = await own.catalog.document("text:handbook")
    assert detail.id == handbook_id(OWN)
    for output in (listed, runs, detail):
        leaks.assert_none(output)
    theirs = handbook_id(OTHER)
    for reference in (theirs, theirs[:12], "text:ledger"):
        with pytest.raises(DocumentNotResolved) as refused:
            await own.catalog.document(reference)
        assert refused.value.code == ErrorCode.DOCUMENT_NOT_FOUND
        leaks.assert_none(refused.value.message, asked=[reference])


UNBOUND: dict[str, Callable[[GraphRag], Awaitable[object]]] = {
    "retrieval": lambda rag: rag.retriever.retrieve(VAULT),
    "answer": lambda rag: rag.answers.answer(VAULT),  # type: ignore[union-attr]
    "stream": lambda rag: anext(rag.answers.stream(VAULT)),  # type: ignore[union-attr]
    "catalog": lambda rag: rag.catalog.documents(),
}


@pytest.mark.parametrize("call", sorted(UNBOUND))
async def test_unbound_it_is_refused_before_any_statement(
    unbound: GraphRag, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    await refused_unsent(monkeypatch, lambda: UNBOUND[call](unbound))
