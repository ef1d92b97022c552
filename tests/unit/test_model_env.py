"""GRAPHRAG_* settings of the chat endpoint, the lanes and the output limits: defaults by provider, checked values.

The chat client built from them is called over real HTTP on the loopback OpenAI-compatible server.
"""

from __future__ import annotations

import pytest

from graphrag_orm.answers import AnswersOptions
from graphrag_orm.chat import ChatMessage, ChatRequest, OpenAIChat
from graphrag_orm.chat.endpoint import StructuredOutput, TokenLimit
from graphrag_orm.environment import model_settings, models_from_env
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.ingestion.options import IngestionOptions
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.text2cypher import Text2CypherOptions
from tests.support.openai_server import OpenAIServer

LOCAL = {"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai-compatible", "OPENAI_BASE_URL": "http://h:1/v1"}
HOSTED = {"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai", "OPENAI_API_KEY": "sk-test"}
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}


def test_a_local_endpoint_gets_one_lane_short_replies_and_a_long_timeout() -> None:
    load = model_settings(LOCAL).load
    assert (load.endpoint.token_limit, load.endpoint.timeout_seconds) == (TokenLimit.BOTH, 600.0)
    options = load.apply(None)
    assert options.ingestion.lanes == 1
    assert (options.answers.max_output_tokens, options.extraction.max_output_tokens) == (512, 1_024)


def test_graph_questions_get_the_local_reply_bound_unless_the_variable_or_the_caller_says_otherwise() -> None:
    assert model_settings(LOCAL).load.text2cypher(Text2CypherOptions()).max_output_tokens == 512
    assert model_settings(HOSTED).load.text2cypher(Text2CypherOptions()).max_output_tokens == 2_048
    load = model_settings({**LOCAL, "GRAPHRAG_TEXT2CYPHER_MAX_TOKENS": "300"}).load
    assert load.text2cypher(Text2CypherOptions(max_rows=5)).max_output_tokens == 300
    assert load.text2cypher(Text2CypherOptions(max_output_tokens=64)).max_output_tokens == 64
    with pytest.raises(ConfigurationError, match="GRAPHRAG_TEXT2CYPHER_MAX_TOKENS"):
        model_settings({**LOCAL, "GRAPHRAG_TEXT2CYPHER_MAX_TOKENS": "99999"}).load.text2cypher(Text2CypherOptions())


def test_a_hosted_endpoint_keeps_the_options_own_figures() -> None:
    load = model_settings(HOSTED).load
    assert (load.endpoint.token_limit, load.endpoint.timeout_seconds) == (TokenLimit.MAX_COMPLETION_TOKENS, 120.0)
    assert load.apply(None) == GraphRagOptions()


def test_variables_win_over_the_providers_defaults_and_the_callers_options_over_both() -> None:
    environ = {
        **LOCAL,
        "GRAPHRAG_STRUCTURED_OUTPUT": "json_object",
        "GRAPHRAG_CHAT_TIMEOUT": "900",
        "GRAPHRAG_LANES": "3",
        "GRAPHRAG_ANSWER_MAX_TOKENS": "700",
    }
    load = model_settings(environ).load
    assert (load.endpoint.structured_output, load.endpoint.timeout_seconds) == (StructuredOutput.JSON_OBJECT, 900.0)
    given = GraphRagOptions(ingestion=IngestionOptions(lanes=2), answers=AnswersOptions())
    options = load.apply(given)
    assert (options.ingestion.lanes, options.answers.max_output_tokens) == (2, 700)
    assert options.extraction.max_output_tokens == 1_024


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("GRAPHRAG_LANES", "0"),
        ("GRAPHRAG_LANES", "two"),
        ("GRAPHRAG_EXTRACTION_MAX_TOKENS", "100"),
        ("GRAPHRAG_CHAT_TIMEOUT", "soon"),
        ("GRAPHRAG_CHAT_TIMEOUT", "99999"),
        ("GRAPHRAG_STRUCTURED_OUTPUT", "grammar-secret"),
        ("GRAPHRAG_TOKEN_LIMIT", "n-secret"),
        ("GRAPHRAG_STREAM_USAGE", "maybe-secret"),
    ],
)
def test_a_value_out_of_bounds_is_invalid_option_naming_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        model_settings({**LOCAL, variable: value}).load.apply(None)
    assert refused.value.code == "invalid-option"
    assert variable in refused.value.message and "secret" not in refused.value.message


async def test_the_environments_chat_client_speaks_as_the_variables_say(openai_server: OpenAIServer) -> None:
    environ = {**LOCAL, "OPENAI_BASE_URL": openai_server.url, "GRAPHRAG_STRUCTURED_OUTPUT": "json_object"}
    chat = models_from_env(environ).chat
    assert isinstance(chat, OpenAIChat)
    request = ChatRequest(
        messages=(ChatMessage(role="user", content="q"),), response_schema=SCHEMA, max_output_tokens=9
    )
    async with chat:
        await chat.complete(request)
    body = openai_server.requests[0].body
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert (body["max_tokens"], body["max_completion_tokens"]) == (9, 9)
