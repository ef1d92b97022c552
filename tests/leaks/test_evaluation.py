"""Evaluation bound to one tenant: the evaluator's report, and the stored chunks and documents it reads
back by id, hold nothing of the other tenant, even when a case names the other's ids and words."""

from __future__ import annotations

import pytest

from graphrag_orm import GraphRag
from graphrag_orm.codes import ErrorCode
from graphrag_orm.evaluation import EvalCase, Evaluator
from graphrag_orm.evaluation.stored import StoredChunks
from graphrag_orm.evaluation.values import CaseOutcome
from tests.leaks.corpus import BY_SECRET, OTHER, OWN, SECRETS, TERMS, VAULT, Leaks, handbook_id, without_echo
from tests.support.tenancy import sent_tenants

CASES = (
    EvalCase(id="own", question=VAULT, answerable=True, required_phrases=(SECRETS[OWN],)),
    EvalCase(
        id="theirs",
        question=BY_SECRET,
        answerable=True,
        required_phrases=(SECRETS[OTHER], TERMS[OTHER]),
        expected_documents=(handbook_id(OTHER), "text:ledger"),
    ),
)


async def test_stored_chunks_read_back_only_the_tenants_own(at_hand: GraphRag, leaks: Leaks) -> None:
    own = at_hand.for_tenant(OWN)
    stored = StoredChunks(own.store, own.model)
    assert await stored.chunks(sorted(leaks.other_ids)) == {}
    assert await stored.document_uris(list(leaks.other_documents)) == {}
    # Its own are read back (the same reads, so they are not empty by accident).
    mine = await stored.chunks(sorted(leaks.own_ids))
    assert mine and any(SECRETS[OWN] in chunk.text for chunk in mine.values())
    assert await stored.document_uris([handbook_id(OWN)]) == {handbook_id(OWN): "text:handbook"}


async def test_the_report_holds_nothing_of_the_other_tenant(at_hand: GraphRag, leaks: Leaks) -> None:
    report = await Evaluator(at_hand.for_tenant(OWN)).run(CASES)
    own, theirs = report.cases
    assert own.outcome == CaseOutcome.ANSWERED and own.phrases_found == (True,) and own.supported
    assert theirs.phrases_found == (False, False) and theirs.documents_found == (False, False)
    # The cases' own words (the other tenant's secret and ids, as the caller wrote them) are echoed.
    echoed = ("question", "requiredPhrases", "expectedDocuments")
    leaks.assert_none(without_echo(report.model_dump(mode="json", by_alias=True), echoed))


async def test_unbound_every_case_fails_with_tenant_required_and_nothing_is_sent(
    unbound: GraphRag, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_tenants(monkeypatch)
    report = await Evaluator(unbound, max_consecutive_failures=len(CASES)).run(CASES)
    assert [(case.outcome, case.error_code) for case in report.cases] == [
        (CaseOutcome.ERROR, ErrorCode.TENANT_REQUIRED)
    ] * len(CASES)
    assert sent == []
