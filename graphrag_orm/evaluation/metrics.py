"""The evaluation's metrics: pure functions of a case, its evidence, its answer and the stored-bytes checks.

No metric needs a model. Per case (``None`` where a metric does not apply, never 0):

- **citation validity**: of the answer's citations, the share whose quote equals the
  *stored* bytes at its span, as read back from the database by chunk id
  (:mod:`graphrag_orm.evaluation.stored`), byte for byte, nothing forgiven. ``None``
  when the answer has no citation (a refusal).
- **answer support**: for an answered case with required phrases, whether at least one
  valid citation's quote holds one of the case's phrases (the rule below). A verified
  quote beside a wrong claim is a real failure of small models ("Who is Dinah?" ->
  "Alice"), and citation validity alone scores it 1.0. ``None`` for a refusal or a
  case without phrases.
- **abstention**: the outcome, one of five: ``answered`` (answerable, answered),
  ``wrongly-refused`` (answerable, refused), ``abstained`` (not answerable, refused
  because the model declined or retrieval found nothing: :data:`ABSTAINING_REASONS`),
  ``failed-refusal`` (not answerable, refused because an answer failed a check:
  ``citation-not-found``, ``no-citations``, ``unreadable-response``),
  ``wrongly-answered`` (not answerable, answered). Correct when ``answered`` or
  ``abstained``. A refusal's reason is kept.
- **coverage**: the share of the case's required phrases found in the text of at least
  one retrieved evidence item (all the items the answer saw). ``None`` without phrases.
- **recall@k**: 1 when one of the first ``k`` items (by rank) holds a required phrase,
  else 0 (hit@k). ``None`` without phrases.
- **reciprocal rank**: ``1 / rank`` of the first item, among the first ``k``, holding a
  required phrase, 0 when none does. ``None`` without phrases.
- **document recall**: the share of the case's expected documents (by document id or
  source URI) that at least one retrieved item comes from. ``None`` without expected
  documents.

A phrase is found in an item's text as quote location forgives
(:mod:`graphrag_orm.citations`), and only that far: runs of whitespace match any
other non-empty run, whitespace at the phrase's ends is ignored, and the emphasis marks
``_`` and ``*`` are skipped in both (the normalisation is
:func:`graphrag_orm.placement.normalise_runs`, shared with the locators). Nothing else
is forgiven: no case folding, no other character, no match across two items. Like
``str.find``, a phrase may start or end inside a word.

Totals: ``abstention`` is the share of correct outcomes among cases that have one;
``answer support`` the share of supported cases among those it applies to;
``citation validity`` is pooled (valid citations over all citations); coverage,
recall@k, MRR and document recall are the means over the cases where they apply.
Cases that raised a coded error count in ``errors`` and ``failing`` and in no rate.
Tokens are summed over the cases that reported them; ``cases_without_tokens`` counts
the cases whose chat calls reported none (stand-ins).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from graphrag_orm.answers import Answer
from graphrag_orm.citations import CitationRules
from graphrag_orm.evaluation.cases import EvalCase
from graphrag_orm.evaluation.values import (
    ABSTAINING_REASONS,
    CaseOutcome,
    CaseResult,
    CitationCheck,
    CitationStatus,
    EvaluatedItem,
    Totals,
)
from graphrag_orm.evidence import Evidence, EvidenceItem
from graphrag_orm.placement import collapse_whitespace, normalise_runs

__all__ = ["holds", "normalise_phrase", "outcome_of", "score_case", "supported", "totals"]


def normalise_phrase(phrase: str) -> str:
    """``phrase`` without emphasis marks, its whitespace runs as one space, trimmed."""
    for mark in CitationRules.EMPHASIS_MARKS:
        phrase = phrase.replace(mark, "")
    return collapse_whitespace(phrase)


@lru_cache(maxsize=256)
def _normalised_text(text: str) -> str:
    return normalise_runs(text, CitationRules.EMPHASIS_MARKS).text


def holds(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase`` under the module's rules; an empty phrase is never held."""
    needle = normalise_phrase(phrase)
    return bool(needle) and needle in _normalised_text(text)


def outcome_of(answerable: bool, answered: bool, reason: str | None = None) -> CaseOutcome:
    """One of the five abstention outcomes; ``reason`` is a refusal's (``None`` reads as an abstention)."""
    if answerable:
        return CaseOutcome.ANSWERED if answered else CaseOutcome.WRONGLY_REFUSED
    if answered:
        return CaseOutcome.WRONGLY_ANSWERED
    return CaseOutcome.ABSTAINED if reason is None or reason in ABSTAINING_REASONS else CaseOutcome.FAILED_REFUSAL


def supported(answer: Answer | None, phrases: Sequence[str], checks: Sequence[CitationCheck]) -> bool | None:
    """Whether a valid cited quote holds one of ``phrases``; ``None`` for a refusal or no phrases."""
    if answer is None or not answer.answered or not phrases:
        return None
    quotes = [check.quote for check in checks if check.status is CitationStatus.VALID]
    return any(holds(quote, phrase) for quote in quotes for phrase in phrases)


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _items(evidence: Evidence, phrases: Sequence[str]) -> tuple[EvaluatedItem, ...]:
    return tuple(
        EvaluatedItem(
            rank=rank,
            chunk_id=item.chunk_id,
            document_id=item.document_id,
            source_uri=item.source_uri,
            title=item.title,
            start_byte=item.start_byte,
            end_byte=item.end_byte,
            phrases=tuple(index for index, phrase in enumerate(phrases) if holds(item.text, phrase)),
        )
        for rank, item in enumerate(evidence.items, start=1)
    )


def _from_document(item: EvidenceItem, expected: str) -> bool:
    return expected in (item.document_id, item.source_uri)


def score_case(
    case: EvalCase,
    evidence: Evidence,
    answer: Answer | None,
    checks: Sequence[CitationCheck],
    *,
    k: int,
    seconds: float,
) -> CaseResult:
    """Every metric of one case; ``answer`` is ``None`` for retrieval only, ``checks`` are its citations'."""
    phrases = case.required_phrases
    items = _items(evidence, phrases)
    found = tuple(any(index in item.phrases for item in items) for index in range(len(phrases)))
    first_hit = next((item.rank for item in items[:k] if item.phrases), None)
    documents = tuple(any(_from_document(item, doc) for item in evidence.items) for doc in case.expected_documents)
    valid = [check.status is CitationStatus.VALID for check in checks]
    receipt = answer.receipt if answer is not None else None
    return CaseResult(
        id=case.id or "",
        question=case.question,
        answerable=case.answerable,
        required_phrases=phrases,
        expected_documents=case.expected_documents,
        outcome=(
            outcome_of(case.answerable, answer.answered, answer.reason) if answer is not None else CaseOutcome.RETRIEVED
        ),
        reason=answer.reason if answer is not None else None,
        answer=answer.text if answer is not None else None,
        citations=tuple(checks),
        citation_validity=_share(valid),
        supported=supported(answer, phrases, checks),
        phrases_found=found,
        coverage=_share(found),
        first_hit=first_hit,
        recall_at_k=(1.0 if first_hit is not None else 0.0) if phrases else None,
        reciprocal_rank=(1.0 / first_hit if first_hit is not None else 0.0) if phrases else None,
        documents_found=documents,
        document_recall=_share(documents),
        items=items,
        limits_reached=evidence.limits_reached,
        chat_calls=receipt.chat_calls if receipt else 0,
        input_tokens=receipt.input_tokens if receipt else None,
        output_tokens=receipt.output_tokens if receipt else None,
        retrieval_seconds=receipt.retrieval_seconds if receipt else seconds,
        answer_seconds=receipt.answer_seconds if receipt else 0.0,
        seconds=round(seconds, 6),
    )


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None


def totals(results: Sequence[CaseResult], seconds: float) -> Totals:
    """The run's totals under the module's rules."""
    scored = [result for result in results if result.outcome is not CaseOutcome.ERROR]
    outcomes = Counter(result.outcome for result in results)
    judged = [result.abstention_correct for result in scored if result.abstention_correct is not None]
    citations = sum(len(result.citations) for result in scored)
    support = [result.supported for result in scored if result.supported is not None]
    valid = sum(check.status is CitationStatus.VALID for result in scored for check in result.citations)
    return Totals(
        cases=len(results),
        errors=outcomes[CaseOutcome.ERROR],
        failing=sum(result.failing for result in results),
        answered=outcomes[CaseOutcome.ANSWERED],
        wrongly_refused=outcomes[CaseOutcome.WRONGLY_REFUSED],
        abstained=outcomes[CaseOutcome.ABSTAINED],
        wrongly_answered=outcomes[CaseOutcome.WRONGLY_ANSWERED],
        failed_refusals=outcomes[CaseOutcome.FAILED_REFUSAL],
        abstention=_share(judged),
        citations=citations,
        valid_citations=valid,
        citation_validity=valid / citations if citations else None,
        support_judged=len(support),
        supported=sum(support),
        answer_support=_share(support),
        coverage=_mean([result.coverage for result in scored]),
        recall_at_k=_mean([result.recall_at_k for result in scored]),
        mrr=_mean([result.reciprocal_rank for result in scored]),
        document_recall=_mean([result.document_recall for result in scored]),
        reasons=dict(sorted(Counter(result.reason for result in scored if result.reason).items())),
        chat_calls=sum(result.chat_calls for result in scored),
        input_tokens=sum(result.input_tokens or 0 for result in scored),
        output_tokens=sum(result.output_tokens or 0 for result in scored),
        cases_without_tokens=sum(1 for result in scored if result.chat_calls and result.input_tokens is None),
        seconds=round(seconds, 6),
    )
