"""A whole build in several transactions behind one switch (graphrag_orm.communities.staging), on the real Neo4j.

Small ``transaction_rows`` make the harbour sample's build take many transactions; a store that
fails its n-th write stands in for a kill between them (the transaction it fails in is rolled
back, those before it stay committed, as when the process dies).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest

from examples.harbour.fleet import FLEET
from graphrag_orm import GraphRag
from graphrag_orm.codes import HealthFinding
from graphrag_orm.communities import CommunityOptions, CommunityService, ReportService
from graphrag_orm.communities.staging import RETIRED_LABEL, STAGED_LABEL, StagedBuild
from graphrag_orm.errors import CommunityBuildSuperseded, ConfigurationError
from graphrag_orm.store import Store, StoreTransaction
from tests.integration.test_communities import rows
from tests.integration.test_community_reports import harbour  # noqa: F401 (the fixture)

SMALL = CommunityOptions(transaction_rows=3)


class Killed(Exception):
    """The process died here."""


class _Dying:
    """A transaction that dies at the ``at``-th statement named ``name`` (counted over the store's life)."""

    def __init__(self, tx: StoreTransaction, store: DiesAt) -> None:
        self._tx, self._store = tx, store

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._tx, attribute)

    async def run(self, cypher: str, parameters: Any = None, *, name: str = "run", **kwargs: Any) -> Any:
        if name == self._store.name:
            self._store.seen += 1
            if self._store.seen == self._store.at:
                raise Killed(f"killed at {name} #{self._store.at}")
        return await self._tx.run(cypher, parameters, name=name, **kwargs)


class DiesAt:
    """The suite's store, except that the transaction running the ``at``-th statement named ``name``
    dies there: it is rolled back, and those committed before it stay, as when the process dies."""

    def __init__(self, store: Store, name: str, at: int = 1) -> None:
        self._store, self.name, self.at, self.seen = store, name, at, 0

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._store, attribute)

    async def write(self, work: Callable[[StoreTransaction], Awaitable[Any]], **kwargs: Any) -> Any:
        async def dying(tx: StoreTransaction) -> Any:
            return await work(cast(StoreTransaction, _Dying(tx, self)))

        return await self._store.write(dying, **kwargs)


async def snapshot(facade: GraphRag) -> list[tuple[Any, ...]]:
    """What a reader sees: each community with its level, fingerprint, parent and members, and each report."""
    found = await rows(
        facade,
        "MATCH (c:Community) OPTIONAL MATCH (c)-[:PARENT_COMMUNITY]->(p:Community) "
        "OPTIONAL MATCH (c)-[:HAS_REPORT]->(r:CommunityReport) "
        "RETURN c.id AS id, c.level AS level, c.fingerprint AS fingerprint, p.id AS parent, "
        "COLLECT { MATCH (t)-[:IN_COMMUNITY]->(c) RETURN t.id ORDER BY t.id } AS members, "
        "r.id AS report, COUNT { (r)-[:HAS_FINDING]->(:ReportFinding) } AS findings ORDER BY id",
    )
    return [tuple(row.values()) for row in found]


async def leftovers(facade: GraphRag) -> dict[str, int]:
    (row,) = await rows(
        facade,
        f"RETURN COUNT {{ (:{STAGED_LABEL}) }} AS staged, COUNT {{ (:{RETIRED_LABEL}) }} AS retired, "
        f"COUNT {{ ()-[:IN_COMMUNITY]->(:{STAGED_LABEL}|{RETIRED_LABEL}) }} AS placed",
    )
    return dict(row)


async def test_a_build_in_many_transactions_stores_what_one_transaction_stored(harbour: GraphRag) -> None:  # noqa: F811
    service = CommunityService(harbour.store, FLEET)
    whole = await service.build(CommunityOptions(transaction_rows=1_000_000))
    once = await snapshot(harbour)
    placed = sum(len(row[4]) for row in once)
    assert placed > 3 * SMALL.transaction_rows, "the memberships span several small transactions"
    many = await service.build(SMALL)
    assert many.transactions > whole.transactions + 3 and many.removed == whole.communities
    assert await snapshot(harbour) == once, "the same communities, parents and members"
    assert await leftovers(harbour) == {"staged": 0, "retired": 0, "placed": 0}
    assert CommunityOptions().transaction_rows == 20_000
    for bad in (0, 1_000_001):
        with pytest.raises(ConfigurationError):
            CommunityOptions(transaction_rows=bad)


@pytest.mark.parametrize(("name", "at"), [("communities.stage", 3), ("communities.switch", 1)])
async def test_a_build_killed_before_its_switch_leaves_what_readers_saw(
    harbour: GraphRag,  # noqa: F811
    name: str,
    at: int,
) -> None:
    await CommunityService(harbour.store, FLEET).build()
    await ReportService(harbour.store, FLEET).write()
    before = await snapshot(harbour)
    assert any(row[5] is not None for row in before), "reports are part of what readers see"
    with pytest.raises(Killed):
        await CommunityService(cast(Store, DiesAt(harbour.store, name, at)), FLEET).build(SMALL)
    assert await snapshot(harbour) == before, "the old communities and reports, whole"
    assert (await leftovers(harbour))["staged"] > 0, "what was staged before the kill is left"
    again = await CommunityService(harbour.store, FLEET).build(SMALL)
    assert again.removed == len(before) and await leftovers(harbour) == {"staged": 0, "retired": 0, "placed": 0}


async def test_a_build_killed_after_its_switch_shows_the_new_communities_and_a_reset_clears_the_rest(
    harbour: GraphRag,  # noqa: F811
) -> None:
    service = CommunityService(harbour.store, FLEET)
    await service.build()
    await ReportService(harbour.store, FLEET).write()
    with pytest.raises(Killed):
        await CommunityService(cast(Store, DiesAt(harbour.store, "communities.retire", 2)), FLEET).build(SMALL)
    after_kill = await snapshot(harbour)
    assert after_kill and all(row[5] is None for row in after_kill), "the new communities, no report yet"
    left = await leftovers(harbour)
    assert left["retired"] > 0 and left["staged"] == 0
    health = await harbour.maintenance.check()
    assert health.count(HealthFinding.COMMUNITY_BUILD_LEFTOVERS) == left["retired"]
    await service.build()
    assert HealthFinding.COMMUNITY_BUILD_LEFTOVERS not in (await harbour.maintenance.check()).codes
    assert await snapshot(harbour) == after_kill, "the same communities as a clean build"
    with pytest.raises(Killed):
        await CommunityService(cast(Store, DiesAt(harbour.store, "communities.retire", 1)), FLEET).build(SMALL)
    assert (await leftovers(harbour))["retired"] > 0
    reset = await harbour.maintenance.reset()
    assert reset.communities == len(after_kill)
    assert await leftovers(harbour) == {"staged": 0, "retired": 0, "placed": 0}


async def test_a_build_whose_staged_communities_a_later_build_removed_fails_with_a_code(
    harbour: GraphRag,  # noqa: F811
) -> None:
    service = CommunityService(harbour.store, FLEET)
    await service.build()
    before = await snapshot(harbour)
    staged = StagedBuild(harbour.store, service.statements, "communities-earlier", 10)
    await staged.stage([{"id": "x", "level": 0, "size": 0, "facts": 0, "fingerprint": "f"}], [], {})
    assert (await leftovers(harbour))["staged"] == 1
    later = await service.build(SMALL)  # starts by removing what no build switched
    assert (await leftovers(harbour))["staged"] == 0 and later.communities == len(before)
    with pytest.raises(CommunityBuildSuperseded) as superseded:
        await staged.switch(1, None)
    assert superseded.value.code == "concurrent-write"
    assert await snapshot(harbour) == before, "the later build's communities stand"
