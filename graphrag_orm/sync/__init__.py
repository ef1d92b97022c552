"""Blocking, typed access to the async services: ``GraphRag.sync()``, for scripts and notebooks.

The twins are generated from the async classes (``scripts/make_sync.py``, ``make sync``;
``make lint`` fails when they are stale), so each blocking method has the async one's
parameters, defaults and return type: ``rag.sync().answers.answer(q)`` is an ``Answer``
to a type checker, and an async iterator (``answers.stream``) is an ``Iterator``.

Every call runs on one private event loop in a daemon thread, owned by the
:class:`SyncGraphRag`: the driver, neomodel's per-task transactions and the services all
live on that loop. ``GraphRag.sync()`` returns the same twin until it is closed, so
``rag.sync().connect()`` and a later ``rag.sync().answers`` share the loop the driver was
opened on. Closing (``close()`` or leaving ``with``) closes the facade and stops the loop;
a call after that, or a blocking call made from the loop's own thread (a ``progress``
callback), raises ``RuntimeError`` rather than waiting forever. Leaving a ``for`` over a
stream early closes the stream, and with it the model call.
"""

from graphrag_orm.sync._generated import (
    SyncAnswersService,
    SyncGraphRag,
    SyncIngestionService,
    SyncMaintenanceService,
    SyncRetriever,
)

__all__ = ["SyncAnswersService", "SyncGraphRag", "SyncIngestionService", "SyncMaintenanceService", "SyncRetriever"]
