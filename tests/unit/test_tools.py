"""Agent tools without a database: the definitions, every refused input, the trail and the span.

Every call here is refused before any read, so a ``GraphRag`` that was never connected
is enough; a call that reached the database would fail with ``not-connected`` instead.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from examples.recall.bikes import BIKES
from graphrag_orm import ConfigurationError, GraphRag
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ontology import Ontology
from graphrag_orm.tools import INSTRUCTIONS, GraphRagTools, ToolCall, ToolOptions, ToolTrail, TrailRecorder
from tests.support.tracing import captured_spans


def rag(*, chat: bool = True, ontology: Ontology | None = None) -> GraphRag:
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat() if chat or ontology is not None else None,
        ontology=ontology,
    )


def functions(tools: GraphRagTools) -> dict[str, dict[str, Any]]:
    return {definition["function"]["name"]: definition["function"] for definition in tools.definitions()}


# --- definitions ----------------------------------------------------------------------


def test_without_an_ontology_two_tools_are_offered_as_closed_openai_function_schemas() -> None:
    tools = GraphRagTools(rag())
    definitions = tools.definitions()
    assert [d["type"] for d in definitions] == ["function", "function"]
    offered = functions(tools)
    assert list(offered) == ["answer_from_documents", "search_documents"]
    for function in offered.values():
        assert function["description"]
        assert function["parameters"]["type"] == "object"
        assert function["parameters"]["additionalProperties"] is False
    answer = offered["answer_from_documents"]["parameters"]
    assert answer["required"] == ["question"]
    # No length bound reaches a model (grammar converters expand it rule by rule); it is in words.
    question = answer["properties"]["question"]
    assert "maxLength" not in question and "minLength" not in question
    assert question["description"].endswith("(at most 4000 characters)")
    search = offered["search_documents"]["parameters"]
    assert search["required"] == ["query"]
    assert search["properties"]["limit"] | {"description": ""} == {
        "type": "integer",
        "minimum": 1,
        "maximum": 20,
        "default": 5,
        "description": "",
    }
    json.dumps(definitions)  # JSON-ready as they are


def _length_bounds(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [key for key in schema if key in ("minLength", "maxLength")]
        return found + [key for value in schema.values() for key in _length_bounds(value)]
    if isinstance(schema, list):
        return [key for item in schema for key in _length_bounds(item)]
    return []


def test_the_schemas_offered_to_a_model_carry_no_length_bounds_and_mcp_keeps_them() -> None:
    # llama-cpp-python's grammar converter makes a maxLength one nested rule per character and
    # fails on a long one; the model sees the bound in words, MCP clients the full schema.
    tools = GraphRagTools(rag(ontology=BIKES))
    for definition in tools.definitions():
        assert _length_bounds(definition) == [], definition["function"]["name"]
    full = {spec.name: spec.input_schema for spec in tools.specs()}
    assert full["answer_from_documents"]["properties"]["question"]["maxLength"] == 4_000
    assert full["related_facts"]["properties"]["thing_id"] | {"description": ""} == {
        "type": "string",
        "minLength": 1,
        "maxLength": 128,
        "description": "",
    }
    offered = functions(tools)["related_facts"]["parameters"]["properties"]["thing_id"]
    assert offered == {"type": "string", "description": "A thingId that find_things returned. (at most 128 characters)"}
    kind = functions(tools)["find_things"]["parameters"]["properties"]["kind"]
    assert kind == full["find_things"]["properties"]["kind"]  # other keywords as they were


async def test_a_question_past_the_bound_the_model_was_not_given_is_a_coded_tool_error() -> None:
    result = await GraphRagTools(rag()).call("answer_from_documents", {"question": "x" * 4_001})
    assert result.error is not None and result.error.code == "invalid-arguments"
    assert result.error.message == "answer_from_documents: question is longer than 4000 characters"


def test_with_an_ontology_find_things_and_related_facts_are_offered_with_its_kinds() -> None:
    offered = functions(GraphRagTools(rag(ontology=BIKES)))
    assert list(offered) == [
        "answer_from_documents",
        "search_documents",
        "find_things",
        "related_facts",
        "answer_about_corpus",
    ]
    assert offered["answer_about_corpus"]["parameters"]["required"] == ["question"]
    kind = offered["find_things"]["parameters"]["properties"]["kind"]
    # Nullable as anyOf, never a type list (llama.cpp's grammar converter drops a list's enum).
    assert kind["anyOf"] == [{"type": "string", "enum": ["Bike", "Part", "Supplier", "Bulletin"]}, {"type": "null"}]
    assert "type" not in kind
    assert offered["find_things"]["parameters"]["required"] == ["name"]
    assert offered["related_facts"]["parameters"]["required"] == ["thing_id"]


def test_without_a_chat_client_answer_from_documents_is_not_offered() -> None:
    tools = GraphRagTools(rag(chat=False))
    assert tools.names == ("search_documents",)


def test_the_search_default_follows_the_options_and_options_are_bounded() -> None:
    tools = GraphRagTools(rag(), ToolOptions(search_limit=3))
    assert functions(tools)["search_documents"]["parameters"]["properties"]["limit"]["default"] == 3
    for bad in ({"search_limit": 21}, {"max_things": 11}, {"max_facts": 51}, {"search_limit": True}):
        with pytest.raises(ConfigurationError) as refused:
            ToolOptions(**bad)
        assert refused.value.code == "invalid-option"


def test_the_instructions_send_answers_through_the_answer_tool_and_say_what_a_refusal_means() -> None:
    assert "answer_from_documents" in INSTRUCTIONS
    assert "do not answer the question" in INSTRUCTIONS
    assert "never cite them" in INSTRUCTIONS


# --- refused calls ----------------------------------------------------------------------


async def test_an_unknown_tool_is_a_coded_result_never_an_exception() -> None:
    trail = ToolTrail()
    tools = GraphRagTools(rag(), trail=trail)
    result = await tools.call("delete_everything", "{}")
    assert result.is_error and result.value is None
    assert result.error is not None and result.error.code == "unknown-tool"
    assert result.to_payload() == {"error": {"code": "unknown-tool", "message": result.error.message}}
    assert "answer_from_documents, search_documents" in result.error.message
    assert "\n" not in result.error.message
    (call,) = trail.calls
    assert (call.tool, call.code, call.arguments, call.evidence) == ("delete_everything", "unknown-tool", {}, ())


async def test_knowledge_tools_without_an_ontology_are_unknown() -> None:
    tools = GraphRagTools(rag())
    for name, arguments in (("find_things", {"name": "BC-310"}), ("related_facts", {"thing_id": "x"})):
        result = await tools.call(name, arguments)
        assert result.error is not None and result.error.code == "unknown-tool", name


async def test_an_unknown_tool_name_is_shown_on_one_bounded_line() -> None:
    result = await GraphRagTools(rag()).call("x\n" * 500)
    assert result.error is not None and "\n" not in result.error.message
    assert len(result.tool) <= 60


BAD_ARGUMENTS = [
    ("answer_from_documents", "not json", "not valid JSON"),
    ("answer_from_documents", "[1, 2]", "must be a JSON object"),
    ("answer_from_documents", '"a question"', "must be a JSON object"),
    ("answer_from_documents", "{}", "missing argument 'question'"),
    ("answer_from_documents", "", "missing argument 'question'"),
    ("answer_from_documents", {"question": ""}, "question must not be empty"),
    ("answer_from_documents", {"question": " \n\t "}, "question must not be empty"),
    ("answer_from_documents", {"question": "x" * 4_001}, "longer than 4000 characters"),
    ("answer_from_documents", {"question": 42}, "question must be a string"),
    ("answer_from_documents", {"question": None}, "question must not be null"),
    ("answer_from_documents", '{"question": "half a pair \\ud800"}', "question must be valid Unicode text"),
    ("answer_from_documents", {"question": "ok?", "scope": "all"}, "unknown argument 'scope'"),
    ("search_documents", {"query": "brakes", "limit": 0}, "limit must be 1 to 20"),
    ("search_documents", {"query": "brakes", "limit": 21}, "limit must be 1 to 20"),
    ("search_documents", {"query": "brakes", "limit": "5"}, "limit must be an integer"),
    ("search_documents", {"query": "brakes", "limit": True}, "limit must be an integer"),
    ("search_documents", {"query": "brakes", "limit": 5.5}, "limit must be an integer"),
    ("search_documents", {"limit": 5}, "missing argument 'query'"),
    ("find_things", {"name": "BC-310", "kind": "Planet"}, "kind must be one of: Bike, Part, Supplier, Bulletin"),
    ("find_things", {"name": "BC-310", "kind": 3}, "kind must be one of"),
    ("find_things", {"name": ["BC-310"]}, "name must be a string"),
    ("find_things", {"name": "x" * 201}, "longer than 200 characters"),
    ("related_facts", {"thing_id": "a" * 129}, "longer than 128 characters"),
    ("related_facts", {"thingId": "abc"}, "unknown argument 'thingId'"),
]


@pytest.mark.parametrize(("tool", "arguments", "problem"), BAD_ARGUMENTS)
async def test_bad_arguments_are_invalid_arguments_with_a_one_line_message(
    tool: str, arguments: str | dict[str, Any], problem: str
) -> None:
    trail = ToolTrail()
    tools = GraphRagTools(rag(ontology=BIKES), trail=trail)
    result = await tools.call(tool, arguments)
    assert result.error is not None, result
    assert result.error.code == "invalid-arguments"
    assert problem in result.error.message
    assert result.error.message.startswith(f"{tool}: ")
    assert "\n" not in result.error.message and len(result.error.message) <= 300
    (call,) = trail.calls
    assert call.code == "invalid-arguments" and call.arguments == {} and call.evidence == ()


async def test_a_missing_optional_argument_takes_its_default_and_reaches_the_database() -> None:
    # Valid arguments pass the check and the call reaches the store, which was never connected.
    result = await GraphRagTools(rag()).call("search_documents", '{"query": "brakes"}')
    assert result.error is not None and result.error.code == "not-connected"


# --- trail and span ----------------------------------------------------------------------


def test_the_in_memory_trail_is_bounded_and_says_how_many_calls_fell_off() -> None:
    trail = ToolTrail(max_calls=2)
    assert isinstance(trail, TrailRecorder)
    for number in range(3):
        trail.record(ToolCall(tool="search_documents", arguments={"query": str(number)}, elapsed_ms=0.0))
    assert [call.arguments["query"] for call in trail.calls] == ["1", "2"]
    assert trail.dropped == 1
    trail.clear()
    assert trail.calls == () and trail.dropped == 0
    for bad in (0, 100_001, True):
        with pytest.raises(ConfigurationError):
            ToolTrail(max_calls=bad)


async def test_each_call_is_one_span_with_the_tool_code_and_timing_and_no_argument_text() -> None:
    tools = GraphRagTools(rag())
    with captured_spans() as exporter:
        await tools.call("answer_from_documents", {"question": "x" * 5_000})
        await tools.call("who knows\nwhat", {})
    first, second = exporter.get_finished_spans()
    assert first.name == second.name == "GraphRag.Tool"
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["graphrag.tool"] == "answer_from_documents"
    assert first.attributes["graphrag.error_code"] == "invalid-arguments"
    assert float(first.attributes["graphrag.elapsed_ms"]) >= 0  # type: ignore[arg-type]
    assert second.attributes["graphrag.tool"] == "unknown"
    assert second.attributes["graphrag.error_code"] == "unknown-tool"
    for span in (first, second):
        assert not any("xxx" in str(value) or "knows" in str(value) for value in span.attributes.values())


@pytest.mark.parametrize("limit", [2.0, 2])
def test_an_integral_number_is_an_integer_limit_as_the_schema_says(limit: float) -> None:
    from graphrag_orm.tools.schemas import parameters_of, read_arguments
    from graphrag_orm.tools.values import ToolName

    parameters = parameters_of(ToolName.SEARCH_DOCUMENTS, max_question_chars=4_000, search_default=5, kinds=())
    checked = read_arguments({"query": "brakes", "limit": limit}, parameters)
    assert checked["limit"] == 2 and type(checked["limit"]) is int
    assert read_arguments('{"query": "brakes", "limit": 2.0}', parameters)["limit"] == 2


def test_a_nullable_kind_takes_null_or_one_of_the_kinds_and_is_filled_in_when_left_out() -> None:
    from graphrag_orm.tools.schemas import BadArguments, parameters_of, read_arguments
    from graphrag_orm.tools.values import ToolName

    parameters = parameters_of(ToolName.FIND_THINGS, max_question_chars=4_000, search_default=5, kinds=("Bike",))
    assert read_arguments({"name": "x", "kind": None}, parameters)["kind"] is None
    assert read_arguments({"name": "x"}, parameters)["kind"] is None
    assert read_arguments({"name": "x", "kind": "Bike"}, parameters)["kind"] == "Bike"
    with pytest.raises(BadArguments, match="kind must be one of: Bike"):
        read_arguments({"name": "x", "kind": "Planet"}, parameters)
