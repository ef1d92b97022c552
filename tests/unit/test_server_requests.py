"""The endpoints' checks before any work, their problems and the event framing (no server, no database)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphrag_orm.answers.values import Answer, AnswerReceipt, Completed, Delta, Disposition, Retrieved
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import Evidence
from graphrag_orm.retrieval import RetrievalOptions
from graphrag_orm.server import AskBody, Problem, SearchBody, ServerOptions
from graphrag_orm.server.bodies import MAX_BODY_BYTES, is_json, read_ask, read_documents_limit, read_search
from graphrag_orm.server.events import encode, event_of
from graphrag_orm.server.openapi import Described

OPTIONS = ServerOptions()
#: The question bound: the retrieval's ``max_question_chars`` by default, on every surface.
BOUND = RetrievalOptions().max_question_chars


def ask(body: object, options: ServerOptions = OPTIONS, bound: int = BOUND) -> AskBody | Problem:
    return read_ask(json.dumps(body).encode(), options, bound)


def code(found: object) -> str:
    assert isinstance(found, Problem), found
    return found.code.value


def test_a_question_of_exactly_the_bound_is_read_and_one_more_character_is_refused() -> None:
    assert BOUND == 4_000  # the same bound as the tools, MCP and the adapters
    assert isinstance(ask({"question": "q" * 4_000}), AskBody)
    assert code(ask({"question": "q" * 4_001})) == "question-too-long"
    assert isinstance(ask({"question": "q" * 10}, bound=10), AskBody)
    assert code(ask({"question": "q" * 11}, bound=10)) == "question-too-long"


def test_the_server_has_no_question_bound_of_its_own() -> None:
    with pytest.raises(ConfigurationError):
        ServerOptions(max_question_length=2_000)  # type: ignore[call-arg]


@pytest.mark.parametrize("question", ["", " ", "\n\t \u2003"])
def test_an_empty_or_blank_question_is_refused(question: str) -> None:
    assert code(ask({"question": question})) == "empty-question"


def test_history_up_to_the_bound_is_read_into_turns_and_past_it_is_refused() -> None:
    turn = {"question": "Who keeps it?", "answer": "Nobody since 1989."}
    body = ask({"question": "Since when?", "history": [turn] * 20})
    assert isinstance(body, AskBody) and len(body.turns()) == 20
    assert body.turns()[0].answer == "Nobody since 1989."
    assert code(ask({"question": "Since when?", "history": [turn] * 21})) == "too-many-turns"
    assert code(ask({"question": "Since when?", "history": [turn]}, ServerOptions(max_history_turns=0))) == (
        "too-many-turns"
    )


@pytest.mark.parametrize(
    "body",
    [
        {"question": "When?", "scope": {"kind": "documents", "documentIds": ["a"]}},
        {"question": "When?", "options": {}},
        {"question": "When?", "history": [{"question": "Who?", "answer": "Me", "scope": None}]},
        {"question": None},
        {"question": 7},
        {"question": ["When?"]},
        {"history": []},
        {"question": "When?", "history": "none"},
        {"question": "When?", "history": [{"question": "Who?", "answer": 3}]},
        {"question": "When?", "history": [{"question": "Who?", "answer": None}]},
        {"question": "When?", "history": [{"question": "Who?"}]},
        {"question": "When?", "history": [{"answer": "Me"}]},
        {"question": "When?", "history": [{"question": None, "answer": "Me"}]},
        ["When?"],
        "When?",
    ],
)
def test_a_body_of_another_shape_or_with_unknown_fields_is_an_invalid_request(body: object) -> None:
    assert code(ask(body)) == "invalid-request"


def test_bodies_that_are_not_json_or_too_large_are_invalid_requests() -> None:
    assert code(read_ask(b"{question", OPTIONS, BOUND)) == "invalid-request"
    assert code(read_ask(b"\xff\xfe", OPTIONS, BOUND)) == "invalid-request"
    assert code(read_ask(b" " * (MAX_BODY_BYTES + 1), OPTIONS, BOUND)) == "invalid-request"
    assert code(read_ask(b'{"question": "\\ud800"}', OPTIONS, BOUND)) in ("invalid-request",)


def test_a_turn_with_a_question_past_the_bound_or_a_long_answer_is_refused() -> None:
    assert code(ask({"question": "Why?", "history": [{"question": "q" * 4_001, "answer": "a"}]})) == (
        "question-too-long"
    )
    assert code(ask({"question": "Why?", "history": [{"question": "Who?", "answer": "a" * 20_001}]})) == (
        "invalid-request"
    )


def test_search_limits_are_integers_from_1_to_20_and_default_to_5() -> None:
    read = read_search(b'{"query": "lantern"}', BOUND)
    assert isinstance(read, SearchBody) and read.limit == 5
    assert isinstance(read_search(b'{"query": "lantern", "limit": 20}', BOUND), SearchBody)
    for limit in ("0", "21", "-1", '"5"', "5.5", "true", "null", "20.0000001", "1e400"):
        assert code(read_search(f'{{"query": "lantern", "limit": {limit}}}'.encode(), BOUND)) == "invalid-limit"
    assert code(read_search(b'{"query": ""}', BOUND)) == "empty-question"
    assert code(read_search(b'{"query": "lantern", "scope": null}', BOUND)) == "invalid-request"
    assert code(read_search(b'{"query": 5, "limit": 0}', BOUND)) == "invalid-request"


@pytest.mark.parametrize("limit", ["2.0", "2.00", "2e0", "0.2e1"])
def test_an_integral_number_is_an_integer_limit_as_json_schema_counts_it(limit: str) -> None:
    read = read_search(f'{{"query": "lantern", "limit": {limit}}}'.encode(), BOUND)
    assert isinstance(read, SearchBody) and read.limit == 2 and type(read.limit) is int


def test_the_documents_limit_is_one_integer_from_1_to_1000_and_defaults_to_50() -> None:
    assert read_documents_limit([]) == 50
    assert read_documents_limit(["1000"]) == 1_000
    assert read_documents_limit(["5.0"]) == 5
    for values in (["0"], ["1001"], ["ten"], ["1e3"], ["-5"], ["٣"], ["5", "6"], [""], ["5.5"], ["5."], ["true"]):
        assert code(read_documents_limit(values)) == "invalid-limit"


def test_only_json_content_types_are_read() -> None:
    assert is_json("application/json") and is_json("Application/JSON; charset=utf-8")
    for other in (None, "", "text/plain", "application/x-www-form-urlencoded", "application/jsonp"):
        assert not is_json(other)


def test_options_are_bounded() -> None:
    for bad in ({"max_history_turns": -1}, {"max_history_turns": 21}):
        with pytest.raises(ConfigurationError):
            ServerOptions(**bad)
    for prefix in ("graphrag", "/graphrag/", "/a b", "/a?b"):
        with pytest.raises(ConfigurationError):
            ServerOptions(prefix=prefix)
    assert ServerOptions(prefix="").prefix == "" and ServerOptions(prefix="/api/v1").prefix == "/api/v1"


def test_an_event_is_one_named_line_of_camel_case_json() -> None:
    receipt = AnswerReceipt(chat_calls=1, retrieval_seconds=0.1, answer_seconds=0.2)
    evidence = Evidence(question="When?", items=())
    framed = encode(event_of(Retrieved(evidence=evidence), "0af7651916cd43dd8448eb211c80319c"))
    assert framed.endswith(b"\n\n") and framed.count(b"\n") == 3
    name, data = framed.decode().splitlines()[:2]
    assert name == "event: retrieved"
    assert json.loads(data.removeprefix("data: ")) == {
        "items": [],
        "contextItems": [],
        "utf8Bytes": 0,
        "omittedItems": 0,
        "limitsReached": [],
        "scope": None,
        "traceId": "0af7651916cd43dd8448eb211c80319c",
    }
    line_breaks = encode(event_of(Delta(text="one\ntwo\r\nthree\u2028")))
    assert line_breaks.count(b"\n") == 3 and b'"provisional":true' in line_breaks
    refusal = Answer(
        disposition=Disposition.INSUFFICIENT_EVIDENCE, reason="no-citations", evidence=evidence, receipt=receipt
    )
    refused = encode(event_of(Completed(answer=refusal, withdraws=True)))
    assert refused.startswith(b"event: refused\n")
    assert json.loads(refused.decode().splitlines()[1].removeprefix("data: ")) == {
        "reason": "no-citations",
        "withdraws": True,
        "receipt": {
            "chatCalls": 1,
            "inputTokens": None,
            "outputTokens": None,
            "retrievalSeconds": 0.1,
            "answerSeconds": 0.2,
            "repairs": 0,
        },
    }


def test_the_global_mode_is_taken_only_where_reports_can_answer_and_never_with_history() -> None:
    body = {"question": "Which themes recur?", "mode": "global"}
    assert code(read_ask(json.dumps(body).encode(), OPTIONS, BOUND)) == "mode-not-available"
    taken = read_ask(json.dumps(body).encode(), OPTIONS, BOUND, global_mode=True)
    assert not isinstance(taken, Problem) and taken.mode == "global"
    turn = {"question": "And?", "answer": "No."}
    with_history = read_ask(json.dumps({**body, "history": [turn]}).encode(), OPTIONS, BOUND, global_mode=True)
    assert code(with_history) == "invalid-request"
    assert code(read_ask(json.dumps({**body, "mode": "all"}).encode(), OPTIONS, BOUND, global_mode=True)) == (
        "invalid-request"
    )
    documents = read_ask(json.dumps({"question": "When?"}).encode(), OPTIONS, BOUND)
    assert not isinstance(documents, Problem) and documents.mode == "documents"


def test_the_served_schema_lists_the_global_mode_only_where_it_is_answered() -> None:
    def schema(global_mode: bool) -> dict[str, Any]:
        extra = Described(BOUND, 20, global_mode=global_mode).ask_extra
        found: dict[str, Any] = extra["requestBody"]["content"]["application/json"]["schema"]
        return found

    assert schema(False)["properties"]["mode"]["const"] == "documents" and "if" not in schema(False)
    with_reports = schema(True)
    assert with_reports["properties"]["mode"]["enum"] == ["documents", "global"]
    assert with_reports["if"]["properties"]["mode"] == {"const": "global"}
    assert with_reports["then"]["properties"]["history"] == {"maxItems": 0}
