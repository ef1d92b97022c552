"""Embeddings from an OpenAI-compatible endpoint, through the openai SDK."""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import TracebackType

from openai import AsyncOpenAI

from graphrag_orm.codes import DocumentErrorCode, ErrorCode
from graphrag_orm.embeddings.base import EmbeddingVectors
from graphrag_orm.embeddings.sets import MAX_DIMENSIONS
from graphrag_orm.embeddings.validation import EmbeddingRejected
from graphrag_orm.errors import ConfigurationError

__all__ = ["MAX_BATCH_SIZE", "NO_KEY", "OpenAIEmbedder", "build_client"]

MAX_BATCH_SIZE = 2048
"""OpenAI's limit on inputs per embeddings request."""


NO_KEY = "no-key"
"""Sent as the key to an endpoint named without one: local OpenAI-compatible servers ignore it."""


def build_client(*, base_url: str | None, api_key: str | None, timeout: float, owner: str) -> AsyncOpenAI:
    """An ``AsyncOpenAI`` with the SDK's own retries off; ``OPENAI_*`` read only when not given.

    Retries belong to :class:`~graphrag_orm.retry.RetryPolicy`, so the SDK must
    not retry as well. An endpoint (``base_url`` or ``OPENAI_BASE_URL``) without
    a key gets the placeholder :data:`NO_KEY`, for local servers that need none;
    with neither a key nor an endpoint, ``ConfigurationError("invalid-option")``
    is raised, naming the variables but never a value.
    """
    if not timeout > 0:
        raise ConfigurationError(ErrorCode.INVALID_OPTION, f"{owner}: timeout must be positive")
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    url = base_url if base_url is not None else (os.environ.get("OPENAI_BASE_URL") or None)
    if not key:
        if url is None:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"{owner}: pass api_key or base_url, or set OPENAI_API_KEY or OPENAI_BASE_URL"
            )
        key = NO_KEY
    return AsyncOpenAI(api_key=key, base_url=url, timeout=timeout, max_retries=0)


class OpenAIEmbedder:
    """Calls ``embeddings.create`` on an OpenAI-compatible endpoint, in batches, in input order.

    ``batch_size`` is 1..2,048 texts per request; one :meth:`embed` call sends its
    texts in consecutive batches and returns the vectors in input order, with
    ``input_tokens`` summed from the provider's usage (``None`` when a response
    had none). ``dimensions`` is sent only when set. ``api_key`` and
    ``base_url`` fall back to ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` only
    when not given; an endpoint without a key (a local server) is called with a
    placeholder key; neither is ``ConfigurationError("invalid-option")``.
    ``timeout`` (seconds) applies to a client built here.

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
    ) -> None:
        if not model:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "OpenAIEmbedder: model must be named")
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
        self._owns_client = client is None
        if client is None:
            self._client = build_client(base_url=base_url, api_key=api_key, timeout=timeout, owner="OpenAIEmbedder")
        else:
            self._client = client.with_options(max_retries=0)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, dimensions={self.dimensions})"

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        """One vector per text, in order, with the provider's token count; no call for no texts."""
        vectors: list[list[float]] = []
        tokens: int | None = 0
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            if self.dimensions is None:
                response = await self._client.embeddings.create(model=self.model, input=batch)
            else:
                response = await self._client.embeddings.create(
                    model=self.model, input=batch, dimensions=self.dimensions
                )
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

    async def aclose(self) -> None:
        """Close the HTTP client if this embedder built it; a client you passed stays open."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> OpenAIEmbedder:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
