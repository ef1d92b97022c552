"""Blocking access to the async services, derived from them rather than written twice.

``GraphRag.sync()`` runs one private event loop in a daemon thread; every call is
submitted to it, so the driver, neomodel's per-task transactions and the services
all live on that one loop. Coroutine methods become blocking calls and async
iterators (``answers.stream``) become ordinary iterators.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from graphrag_orm.facade import GraphRag

T = TypeVar("T")


async def _awaited(work: Awaitable[T]) -> T:
    return await work


class _LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="graphrag-orm-sync", daemon=True)
        self._thread.start()

    def run(self, work: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(_awaited(work), self.loop).result()

    def iterate(self, iterator: AsyncIterator[T]) -> Iterator[T]:
        try:
            while True:
                try:
                    yield self.run(iterator.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            closer = getattr(iterator, "aclose", None)
            if closer is not None:
                self.run(closer())

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)


class SyncService:
    """A service whose coroutine methods block and whose async iterators iterate."""

    def __init__(self, service: object, runner: _LoopThread) -> None:
        self._service = service
        self._runner = runner

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._service, name)
        if inspect.iscoroutinefunction(attribute):
            return self._blocking(attribute)
        if inspect.isasyncgenfunction(attribute):
            return self._iterating(attribute)
        return attribute

    def _blocking(self, method: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
        def call(*args: Any, **kwargs: Any) -> T:
            return self._runner.run(method(*args, **kwargs))

        return call

    def _iterating(self, method: Callable[..., AsyncIterator[T]]) -> Callable[..., Iterator[T]]:
        def call(*args: Any, **kwargs: Any) -> Iterator[T]:
            return self._runner.iterate(method(*args, **kwargs))

        return call


class SyncGraphRag:
    """``GraphRag`` with blocking calls: ``connect()``, ``close()`` and the sync services."""

    def __init__(self, rag: GraphRag) -> None:
        self._rag = rag
        self._runner = _LoopThread()

    def connect(self, *args: Any, **kwargs: Any) -> SyncGraphRag:
        self._runner.run(self._rag.connect(*args, **kwargs))
        return self

    def close(self) -> None:
        try:
            self._runner.run(self._rag.close())
        finally:
            self._runner.stop()

    def __enter__(self) -> SyncGraphRag:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        service = getattr(self._rag, name)
        if name.startswith("_") or isinstance(service, str | int | float | bool) or service is None:
            return service
        return SyncService(service, self._runner)
