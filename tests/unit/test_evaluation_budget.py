"""The harness tells a phrase the byte budget cut from one the ranking missed."""

from __future__ import annotations

from graphrag_orm.codes import LimitName
from graphrag_orm.evaluation.budget import budget_dropped
from graphrag_orm.evidence import Evidence, EvidenceItem
from graphrag_orm.retrieval import RetrievalOptions
from graphrag_orm.values import Limit


def _item(text: str) -> EvidenceItem:
    return EvidenceItem(
        chunk_id=text, document_id="d", source_uri="u", text=text, start_byte=0, end_byte=len(text), score=1.0
    )


class Unbudgeted:
    """Returns every item when the budget is large enough, as a retriever would."""

    options = RetrievalOptions()

    def __init__(self) -> None:
        self.asked: list[int | None] = []

    async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Evidence:
        assert options is not None
        self.asked.append(options.max_utf8_bytes)
        return Evidence(question=question, items=(_item("the ranked passage"), _item("the cut passage")))


async def test_a_phrase_the_budget_cut_is_reported_and_one_the_ranking_missed_is_not() -> None:
    retriever = Unbudgeted()
    cut = Evidence(
        question="q",
        items=(_item("the ranked passage"),),
        limits_reached=(Limit(name=LimitName.MAX_UTF8_BYTES, value=64),),
    )
    phrases = ("ranked passage", "cut passage", "never ranked")
    assert await budget_dropped(retriever, "q", cut, phrases, RetrievalOptions(max_utf8_bytes=64)) == (1,)
    within = cut.model_copy(update={"limits_reached": ()})
    assert await budget_dropped(retriever, "q", within, phrases, RetrievalOptions()) == ()
    assert len(retriever.asked) == 1
