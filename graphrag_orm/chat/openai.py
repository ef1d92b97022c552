"""A chat client for OpenAI-compatible endpoints, through the openai SDK's chat completions.

The SDK is imported when a client is built, not when this module is (see
:mod:`graphrag_orm.embeddings.openai`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from graphrag_orm.chat.base import ChatChunk, ChatReply, ChatRequest, ChatUsage
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.openai import build_client, unreachable
from graphrag_orm.errors import ConfigurationError

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


class OpenAIChat:
    """Chat completions on an OpenAI-compatible endpoint: whole replies and streams.

    A request with a ``response_schema`` is sent as ``response_format``
    ``json_schema`` with its name, and ``"strict": true`` when the request is
    strict (no flag otherwise). ``max_output_tokens`` is sent as
    ``max_completion_tokens``, ``temperature`` when not ``None``, and
    ``reasoning_effort`` (``"low"``, ...) when set here. Streams ask for usage
    (``stream_options.include_usage``), so the last chunk's reply carries it.

    ``api_key`` and ``base_url`` fall back to ``OPENAI_API_KEY`` and
    ``OPENAI_BASE_URL`` only when not given; an endpoint without a key (a local
    server) is called with a placeholder key; neither is
    ``ConfigurationError("invalid-option")``. ``timeout`` (seconds) applies to a
    client built here. Never retries: the SDK's retries are off, also on a
    ``client`` you pass (a copy with ``max_retries=0`` is used). Errors are the
    SDK's (``openai.APIStatusError``, ``APIConnectionError``, ...), for a
    :class:`~graphrag_orm.retry.RetryPolicy` to classify, except one: until the
    endpoint has answered once, a connection that cannot be opened (a closed port, an
    unknown host) raises ``ModelCallFailed("model-unreachable")``. Nothing is logged.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        timeout: float = 120.0,
        reasoning_effort: str | None = None,
    ) -> None:
        if not model:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "OpenAIChat: model must be named")
        self.model = model
        self.reasoning_effort = reasoning_effort
        self._owns_client = client is None
        self._answered = False
        if client is None:
            self._client = build_client(base_url=base_url, api_key=api_key, timeout=timeout, owner="OpenAIChat")
        else:
            self._client = client.with_options(max_retries=0)

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r})"

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if request.response_schema is not None:
            json_schema: dict[str, Any] = {"name": request.schema_name, "schema": request.response_schema}
            if request.strict:
                json_schema["strict"] = True
            arguments["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        if request.max_output_tokens is not None:
            arguments["max_completion_tokens"] = request.max_output_tokens
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
            self._refuse_if_unreachable(error)
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
        connection end. A stream that ends before the model said why it stopped
        raises ``openai.APIConnectionError`` (transient), never a partial reply.
        """
        try:
            stream = await self._client.chat.completions.create(
                **self._arguments(request), stream=True, stream_options={"include_usage": True}
            )
        except Exception as error:
            self._refuse_if_unreachable(error)
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
        finally:
            # Runs on exhaustion, error, aclose() and cancellation alike: the
            # response is closed, which ends the HTTP call.
            await stream.close()
        if finish_reason is None:
            import openai

            raise openai.APIConnectionError(
                message="the reply stream ended before the model finished", request=stream.response.request
            )
        yield ChatChunk(
            reply=ChatReply(text="".join(parts), usage=usage, finish_reason=finish_reason, model=model or self.model)
        )

    def _refuse_if_unreachable(self, error: BaseException) -> None:
        refused = None if self._answered else unreachable(error, self._client, "OpenAIChat")
        if refused is not None:
            raise refused from error

    async def aclose(self) -> None:
        """Close the HTTP client if this chat client built it; a client you passed stays open."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> OpenAIChat:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
