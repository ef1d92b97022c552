"""An ``AsyncOpenAI`` the toolkit's OpenAI clients (chat, embeddings) build and own, or borrow.

The SDK is imported when a client is built, not when this module is: ``import
graphrag_orm`` stays cheap for every offline use and every CLI call.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import TYPE_CHECKING, Self

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["NO_KEY", "OwnedClient", "build_client"]

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
    from openai import AsyncOpenAI

    return AsyncOpenAI(api_key=key, base_url=url, timeout=timeout, max_retries=0)


class OwnedClient:
    """Holds one ``AsyncOpenAI``: built here (SDK retries off) and closed by :meth:`aclose`, or passed
    in (its retries turned off on a copy) and left open for its owner."""

    _client: AsyncOpenAI
    _owns_client: bool

    def _hold(
        self, client: AsyncOpenAI | None, *, base_url: str | None, api_key: str | None, timeout: float, owner: str
    ) -> None:
        self._owns_client = client is None
        if client is None:
            self._client = build_client(base_url=base_url, api_key=api_key, timeout=timeout, owner=owner)
        else:
            self._client = client.with_options(max_retries=0)

    async def aclose(self) -> None:
        """Close the HTTP client if this object built it; a client you passed stays open."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
