"""Embeddings from an OpenAI-compatible endpoint, through the openai SDK.

The SDK is imported when a client is built, not when this module is: ``import
graphrag_orm`` stays cheap for every offline use and every CLI call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphrag_orm.codes import DocumentErrorCode, ErrorCode
from graphrag_orm.embeddings.base import EmbeddingVectors
from graphrag_orm.embeddings.sets import MAX_DIMENSIONS
from graphrag_orm.embeddings.validation import EmbeddingRejected
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.model_failures import endpoint_of, failure_of, unreachable
from graphrag_orm.openai_client import NO_KEY, OwnedClient, build_client

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["MAX_BATCH_SIZE", "NO_KEY", "OpenAIEmbedder", "build_client", "endpoint_of", "unreachable"]

MAX_BATCH_SIZE = 2048
"""OpenAI's limit on inputs per embeddings request."""


_OPENAI_WINDOW = 8191
"""The input limit of OpenAI's text-embedding-3 family and text-embedding-ada-002, in tokens."""


def _known_window(model: str) -> int | None:
    name = model.rsplit("/", 1)[-1]
    return _OPENAI_WINDOW if name.startswith(("text-embedding-3", "text-embedding-ada-002")) else None


class OpenAIEmbedder(OwnedClient):
    """Calls ``embeddings.create`` on an OpenAI-compatible endpoint, in batches, in input order.

    ``batch_size`` is 1..2,048 texts per request; one :meth:`embed` call sends its
    texts in consecutive batches and returns the vectors in input order, with
    ``input_tokens`` summed from the provider's usage (``None`` when a response
    had none). ``dimensions`` is sent only when set. ``api_key`` and
    ``base_url`` fall back to ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` only
    when not given; an endpoint without a key (a local server) is called with a
    placeholder key; neither is ``ConfigurationError("invalid-option")``.
    ``timeout`` (seconds) applies to a client built here. ``max_input_tokens`` is the
    model's window (default 8,191 for the text-embedding-3 family and ada-002, else
    None: unknown); ingestion reports chunks over it.

    Until the endpoint has answered once, a connection that cannot be opened (a closed
    port, an unknown host) raises ``ModelCallFailed("model-unreachable")`` instead of
    the SDK's error (see :func:`unreachable`); any other failed call is a coded
    ``ModelCallFailed`` too (``model-timeout``, ``model-unavailable``,
    ``model-request-rejected``; see :mod:`graphrag_orm.model_failures`).

    Never retries: the SDK's retries are off, also on a ``client`` you pass
    (a copy with ``max_retries=0`` is used), so wrap calls in a
    :class:`~graphrag_orm.retry.RetryPolicy`. A retry repeats the whole call,
    all its batches, so callers keep one call near one batch.
    A response with the wrong number of vectors raises
    ``EmbeddingRejected("embedding-count")``.
    """

    def __init__(
        self,
        model: str,
        *,
        dimensions: int | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        batch_size: int = 256,
        timeout: float = 60.0,
        max_input_tokens: int | None = None,
    ) -> None:
        if not model:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "OpenAIEmbedder: model must be named")
        if max_input_tokens is not None and (isinstance(max_input_tokens, bool) or max_input_tokens < 1):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "OpenAIEmbedder: max_input_tokens must be at least 1")
        if dimensions is not None and not 1 <= dimensions <= MAX_DIMENSIONS:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"OpenAIEmbedder: dimensions must be between 1 and {MAX_DIMENSIONS}"
            )
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"OpenAIEmbedder: batch_size must be between 1 and {MAX_BATCH_SIZE}"
            )
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        #: The most tokens the model reads of one input: given, else 8,191 for OpenAI's
        #: text-embedding-3 and ada-002 models, else None (unknown).
        self.max_input_tokens: int | None = max_input_tokens or _known_window(model)
        self._answered = False
        self._timeout = timeout if client is None else None
        self._hold(client, base_url=base_url, api_key=api_key, timeout=timeout, owner="OpenAIEmbedder")

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, dimensions={self.dimensions})"

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        """One vector per text, in order, with the provider's token count; no call for no texts."""
        vectors: list[list[float]] = []
        tokens: int | None = 0
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                if self.dimensions is None:
                    response = await self._client.embeddings.create(model=self.model, input=batch)
                else:
                    response = await self._client.embeddings.create(
                        model=self.model, input=batch, dimensions=self.dimensions
                    )
            except Exception as error:
                failure = failure_of(
                    error, self._client, "OpenAIEmbedder", answered=self._answered, timeout=self._timeout
                )
                if failure is not None:
                    raise failure from error
                raise
            self._answered = True
            if len(response.data) != len(batch):
                raise EmbeddingRejected(
                    DocumentErrorCode.EMBEDDING_COUNT.value,
                    f"the endpoint returned {len(response.data)} vectors for a batch of {len(batch)}",
                )
            # The data carries its input index; order by it rather than trust the list order.
            for item in sorted(response.data, key=lambda item: item.index):
                vectors.append(list(item.embedding))
            usage = response.usage
            prompt_tokens = usage.prompt_tokens if usage is not None else None
            tokens = tokens + prompt_tokens if tokens is not None and prompt_tokens is not None else None
        return EmbeddingVectors(vectors, input_tokens=tokens)
