"""The private event loop the sync twins run on: one daemon thread per ``SyncGraphRag``.

The driver, neomodel's per-task transactions and the services all live on that one
loop, so every blocking call is submitted to it and waited for. A blocking call made
on the loop's own thread (from a ``progress`` callback, say) would wait for itself
forever: it is refused with ``RuntimeError`` instead, as is any call after ``stop()``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import ParamSpec, TypeVar

__all__ = ["LoopThread"]

P = ParamSpec("P")
T = TypeVar("T")


async def _awaited(work: Awaitable[T]) -> T:
    return await work


class LoopThread:
    """An event loop running in a daemon thread; ``run`` and ``iterate`` block the caller."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="graphrag-orm-sync", daemon=True)
        self._thread.start()
        self._stopped = False

    @property
    def stopped(self) -> bool:
        return self._stopped

    def _check(self) -> None:
        if self._stopped:
            raise RuntimeError("this sync GraphRag is closed; call GraphRag.sync() for a new one")
        if threading.current_thread() is self._thread:
            raise RuntimeError("a blocking call from the sync loop's own thread would wait for itself; await instead")

    def run(self, function: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``await function(*args, **kwargs)`` on the loop, blocking until it ends; its exception is raised here."""
        self._check()
        return asyncio.run_coroutine_threadsafe(_awaited(function(*args, **kwargs)), self.loop).result()

    def iterate(self, function: Callable[P, AsyncIterator[T]], /, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        """The items of ``function(*args, **kwargs)``, each awaited on the loop.

        Closing this iterator (or leaving the ``for`` loop early) closes the async
        iterator on the loop, so a stream's model call stops as it would with ``aclose()``.
        """
        self._check()
        iterator = function(*args, **kwargs)
        try:
            while True:
                try:
                    yield self.run(_next, iterator)
                except StopAsyncIteration:
                    return
        finally:
            closer = getattr(iterator, "aclose", None)
            if closer is not None and not self._stopped:
                self.run(closer)

    def stop(self) -> None:
        """Stop the loop and wait (at most 10 s) for its thread; later calls raise ``RuntimeError``."""
        if self._stopped:
            return
        self._stopped = True
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()


async def _next(iterator: AsyncIterator[T]) -> T:
    return await iterator.__anext__()
