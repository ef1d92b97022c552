"""A paged write: one committed transaction a page until a page comes back short."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphrag_orm.store.store import DEFAULT_WRITE_ATTEMPTS, Store, StoreTransaction

__all__ = ["write_pages"]


async def write_pages(
    store: Store,
    cypher: str,
    parameters: Mapping[str, Any],
    *,
    page: int,
    name: str,
    attempts: int = DEFAULT_WRITE_ATTEMPTS,
) -> tuple[int, int]:
    """Run ``cypher`` (it takes ``$page``, at most that many rows a transaction, and returns
    ``removed``) through ``store.write`` until a page comes back short, each page committed on its
    own and retried as :meth:`Store.write` retries. Returns (rows, transactions)."""
    rows = transactions = 0
    while True:

        async def work(tx: StoreTransaction) -> int:
            found = await tx.run(cypher, {**parameters, "page": page}, name=name)
            return int(found.value("removed", 0))

        done = await store.write(work, attempts=attempts)
        rows, transactions = rows + done, transactions + 1
        if done < page:
            return rows, transactions
