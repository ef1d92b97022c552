"""A run's record in the graph: written Running at the start, stamped while it works, finished once.

Each ingestion call is a run (an ``IngestionRun`` node): Running, then Completed when
every document has an outcome, or Failed when the call was cancelled or threw. While
the run works, :meth:`RunRecords.heartbeat` stamps its node's ``progressAt`` every third
of the lease duration (at most every :data:`HEARTBEAT_MAX_SECONDS`); a run killed or cut
off from the database stops stamping, which is how maintenance tells a stale run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from neo4j.exceptions import DriverError, Neo4jError

from graphrag_orm.extraction.summary import ExtractionSummary
from graphrag_orm.ingestion.leases import settle
from graphrag_orm.ingestion.receipts import DocumentOutcome, DocumentStatus, RunStatus
from graphrag_orm.ingestion.statements import RunStatements
from graphrag_orm.models import LexicalModel
from graphrag_orm.retry import RetryTally
from graphrag_orm.store import Store
from graphrag_orm.values import Limit

__all__ = ["HEARTBEAT_MAX_SECONDS", "RunCounters", "RunRecords"]

#: The longest wait between two stamps of a running run's ``progressAt``.
HEARTBEAT_MAX_SECONDS = 60.0

_log = logging.getLogger(__name__)


class RunCounters:
    """Per-run tallies shared by the documents of one call (asyncio: no locks needed)."""

    def __init__(self) -> None:
        self.embedding_calls = 0
        self.input_tokens = 0
        self.tokens_reported = True
        self.retries = RetryTally()
        self.extraction = ExtractionSummary()
        self.too_many_chunks = False
        self.lease_wait: Limit | None = None
        #: Documents written by this run, by id, as soon as their transaction committed.
        self.committed: dict[str, DocumentOutcome] = {}


class RunRecords:
    """Writes one layout's run nodes; every statement goes through ``store``."""

    def __init__(self, store: Store, model: LexicalModel, lease_duration_seconds: float) -> None:
        self.store = store
        self.model = model
        self.lease_duration_seconds = lease_duration_seconds
        self._runs = RunStatements.render(model.names)

    async def start(self, run_id: str, fingerprint: str) -> None:
        """Write the run's node, Running, with zero counts."""
        now = datetime.now(UTC)
        row = self.model.names.run.row(
            {
                "uid": run_id,
                "started_at": now,
                "status": RunStatus.RUNNING.value,
                "progress_at": now,
                "settings_fingerprint": fingerprint,
                "documents_ingested": 0,
                "documents_unchanged": 0,
                "documents_failed": 0,
                "chunks_written": 0,
            }
        )
        start = self._runs.start
        await self.store.execute(start.cypher, {"rows": [row]}, name=start.name)

    async def heartbeat(self, run_id: str) -> None:
        """Stamp the run's progress every third of the lease duration (at most every minute) until cancelled."""
        interval = min(self.lease_duration_seconds / 3, HEARTBEAT_MAX_SECONDS)
        beat = self._runs.heartbeat
        parameters = {"id": run_id, "running": RunStatus.RUNNING.value}
        while True:
            await asyncio.sleep(interval)
            try:
                result = await self.store.execute(beat.cypher, parameters, name=beat.name)
            except (Neo4jError, DriverError, OSError) as error:
                _log.info("run heartbeat failed (%s); trying again at the next beat", type(error).__name__)
                continue
            if result.value("beat", 0) != 1:
                # Marked Failed by maintenance while still working (paused past the stale time).
                _log.warning("run %s is no longer Running in the graph; its final status will be written", run_id)
                return

    async def finish(self, run_id: str, status: RunStatus, outcomes: Sequence[DocumentOutcome]) -> bool:
        """Write the run's final status and counts, to the end; True when a cancel arrived meanwhile."""
        runs = self.model.names.run
        counts = {
            runs.stored("documents_ingested"): sum(1 for o in outcomes if o.status == DocumentStatus.INGESTED),
            runs.stored("documents_unchanged"): sum(1 for o in outcomes if o.status == DocumentStatus.UNCHANGED),
            runs.stored("documents_failed"): sum(1 for o in outcomes if o.status == DocumentStatus.FAILED),
            runs.stored("chunks_written"): sum(o.chunks for o in outcomes if o.status == DocumentStatus.INGESTED),
            runs.stored("status"): status.value,
            # A run maintenance marked stale while it was only paused: its own end wins.
            runs.stored("failure_reason"): None,
        }
        finish = self._runs.finish
        # If the database is gone the receipt still reports every outcome; the run node
        # stays Running and goes stale, which the health report shows (``stale-runs``).
        try:
            _, cancelled = await settle(
                self.store.execute(finish.cypher, {"id": run_id, "counts": counts}, name=finish.name)
            )
        except (Neo4jError, DriverError, OSError, RuntimeError, TimeoutError):
            return False
        return cancelled
