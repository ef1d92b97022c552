"""A chat client for OpenAI-compatible endpoints, through the openai SDK's chat completions.

The SDK is imported when a client is built, not when this module is (see
:mod:`graphrag_orm.embeddings.openai`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from graphrag_orm.chat.base import ChatChunk, ChatReply, ChatRequest, ChatUsage
from graphrag_orm.chat.endpoint import ChatEndpoint
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.model_failures import failure_of
from graphrag_orm.openai_client import OwnedClient

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types import CompletionUsage

__all__ = ["OpenAIChat", "usage_of"]


def usage_of(usage: CompletionUsage | None) -> ChatUsage | None:
    """The provider's usage as :class:`ChatUsage`; ``None`` when it reported none."""
    if usage is None:
        return None
    details = usage.completion_tokens_details
    return ChatUsage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        reasoning_tokens=details.reasoning_tokens if details is not None else None,
    )


class OpenAIChat(OwnedClient):
    """Chat completions on an OpenAI-compatible endpoint: whole replies and streams.

    ``endpoint`` (:class:`~graphrag_orm.chat.endpoint.ChatEndpoint`) says how the
    server takes a schema and an output limit: by default a request with a
    ``response_schema`` is sent as ``response_format`` ``json_schema`` with its name,
    and ``"strict": true`` when the request is strict (no flag otherwise), and
    ``max_output_tokens`` as ``max_completion_tokens``; llama-cpp-python's server
    needs ``json_object`` with the schema, and ``max_tokens``. ``temperature`` is sent
    when not ``None``, and ``reasoning_effort`` (``"low"``, ...) when set here.
    Streams ask for usage (``stream_options.include_usage``) unless the endpoint says
    not to, so the last chunk's reply carries it when the server sends it.

    ``api_key`` and ``base_url`` fall back to ``OPENAI_API_KEY`` and
    ``OPENAI_BASE_URL`` only when not given; an endpoint without a key (a local
    server) is called with a placeholder key; neither is
    ``ConfigurationError("invalid-option")``. ``timeout`` (seconds, 1 to 3,600; the
    endpoint's, 120 by default) applies to a client built here, and time queued at
    the server counts. Never retries: the SDK's retries are off, also on a
    ``client`` you pass (a copy with ``max_retries=0`` is used). A failed call is a
    coded :class:`~graphrag_orm.errors.ModelCallFailed` (see
    :mod:`graphrag_orm.model_failures`): ``model-unreachable`` until the endpoint has
    answered once, ``model-timeout``, ``model-unavailable`` (transient) or
    ``model-request-rejected``, the SDK's error as its cause, for a
    :class:`~graphrag_orm.retry.RetryPolicy` to classify. Nothing is logged.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        timeout: float | None = None,
        reasoning_effort: str | None = None,
        endpoint: ChatEndpoint | None = None,
    ) -> None:
        if not model:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "OpenAIChat: model must be named")
        endpoint = endpoint or ChatEndpoint()
        if timeout is not None:
            endpoint = ChatEndpoint(endpoint.structured_output, endpoint.token_limit, timeout, endpoint.stream_usage)
        self.model = model
        self.reasoning_effort = reasoning_effort
        self.endpoint = endpoint
        self._answered = False
        self._hold(client, base_url=base_url, api_key=api_key, timeout=endpoint.timeout_seconds, owner="OpenAIChat")

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r})"

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if request.response_schema is not None:
            response_format = self.endpoint.response_format(
                request.schema_name, request.response_schema, request.strict
            )
            if response_format is not None:
                arguments["response_format"] = response_format
        if request.max_output_tokens is not None:
            arguments.update(self.endpoint.output_limit(request.max_output_tokens))
        if request.temperature is not None:
            arguments["temperature"] = request.temperature
        if self.reasoning_effort is not None:
            arguments["reasoning_effort"] = self.reasoning_effort
        return arguments

    async def complete(self, request: ChatRequest) -> ChatReply:
        """The whole reply; its text is ``""`` when the model sent no content."""
        try:
            completion = await self._client.chat.completions.create(**self._arguments(request), stream=False)
        except Exception as error:
            self._raise_coded(error)
            raise
        self._answered = True
        choice = completion.choices[0] if completion.choices else None
        return ChatReply(
            text=(choice.message.content or "") if choice is not None else "",
            usage=usage_of(completion.usage),
            finish_reason=choice.finish_reason if choice is not None else None,
            model=completion.model or self.model,
        )

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        """The reply as it arrives; the last chunk carries the whole reply with usage.

        Closing the generator closes the HTTP response, so the server sees the
        connection end. A stream that breaks, or ends before the model said why it
        stopped, raises ``ModelCallFailed("model-unavailable")`` (transient), never a
        partial reply.
        """
        extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if self.endpoint.stream_usage else {}
        try:
            stream = await self._client.chat.completions.create(**self._arguments(request), stream=True, **extra)
        except Exception as error:
            self._raise_coded(error)
            raise
        self._answered = True
        parts: list[str] = []
        finish_reason: str | None = None
        usage: ChatUsage | None = None
        model: str | None = None
        try:
            async for chunk in stream:
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = usage_of(chunk.usage)
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    if choice.finish_reason is not None:
                        finish_reason = choice.finish_reason
                    delta = choice.delta.content if choice.delta is not None else None
                    if delta:
                        parts.append(delta)
                        yield ChatChunk(delta=delta)
        except Exception as error:
            self._raise_coded(error)
            raise
        finally:
            # Runs on exhaustion, error, aclose() and cancellation alike: the
            # response is closed, which ends the HTTP call.
            await stream.close()
        if finish_reason is None:
            import openai

            ended = openai.APIConnectionError(
                message="the reply stream ended before the model finished", request=stream.response.request
            )
            self._raise_coded(ended)
            raise ended
        yield ChatChunk(
            reply=ChatReply(text="".join(parts), usage=usage, finish_reason=finish_reason, model=model or self.model)
        )

    def _raise_coded(self, error: BaseException) -> None:
        failure = failure_of(
            error, self._client, "OpenAIChat", answered=self._answered, timeout=self.endpoint.timeout_seconds
        )
        if failure is not None:
            raise failure from error
