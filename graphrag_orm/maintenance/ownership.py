"""The foreign-graph rule: maintenance changes only what the toolkit wrote.

An element (node or relationship) counts as the toolkit's when it carries a run id
(the model's ``run_id``, stored ``runId``) *and* that id names an ``IngestionRun``
node. Non-null alone is not enough: another pipeline may stamp its own ``runId``
on nodes under the same labels, while the run node is the toolkit's own record,
committed before the first document of its run is written. So the toolkit deletes
an ``IngestionRun`` node only when nothing it could later remove names it (see
:meth:`Ownership.runs_in_use`); otherwise its elements would turn "foreign".

A violation raises ``GraphRefused("foreign-graph")`` naming counts (never text),
before anything of the batch or call it guards is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import GraphRefused
from graphrag_orm.maintenance.knowledge import RunStamps
from graphrag_orm.store import Queries, StoredNames

__all__ = ["FOREIGN_GRAPH", "Ownership", "counted", "merge_stamps", "stamps_from_rows"]

FOREIGN_GRAPH = ErrorCode.FOREIGN_GRAPH


def merge_stamps(target: dict[str | None, int], more: RunStamps) -> dict[str | None, int]:
    """Add ``more``'s counts into ``target`` (returned for chaining)."""
    for run, count in more.items():
        if count:
            target[run] = target.get(run, 0) + int(count)
    return target


def counted(count: int, kind: str) -> str:
    """``1 document``, ``3 documents``: ``kind`` is plural; a one-word kind loses its s for one."""
    return f"{count} {kind[:-1] if count == 1 and ' ' not in kind and kind.endswith('s') else kind}"


def carrying(items: Sequence[tuple[str, int]]) -> str:
    """``1 document carries``, ``1 document and 2 chunks carry``: counted kinds with the verb agreeing."""
    words = [counted(n, kind) for kind, n in items]
    joined = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    single = len(items) == 1 and items[0][1] == 1 and " " not in items[0][0]
    return f"{joined} {'carries' if single else 'carry'}"


class Ownership:
    """Checks run stamps against the ``IngestionRun`` nodes of one layout."""

    def __init__(self, names: StoredNames) -> None:
        runs = names.run
        # Tenanted (docs/tenancy.md): a run id is known only when it names one of the tenant's runs.
        self._query = (
            f"MATCH (r:{runs.label}) WHERE r.{runs.key} IN $runs{names.tenant_and('r')} RETURN r.{runs.key} AS run"
        )
        self._known: set[str] = set()

    def forget(self) -> None:
        """Clear the runs found so far; each maintenance call starts with this."""
        self._known.clear()

    async def unknown_runs(self, queries: Queries, run_ids: Iterable[str]) -> set[str]:
        """The run ids among ``run_ids`` that name no ``IngestionRun`` node (a read through ``queries``).

        Runs found are remembered until :meth:`forget`, so the batches of one call ask
        once per run; maintenance deletes run nodes only after its batches.
        """
        wanted = sorted(set(run_ids) - self._known)
        if not wanted:
            return set()
        result = await queries.run(self._query, {"runs": wanted}, name="maintenance.ownership.runs")
        found = {str(run) for run in result.column("run")}
        self._known |= found
        return set(wanted) - found

    async def require_owned(
        self,
        queries: Queries,
        stamps: Mapping[str, RunStamps],
        *,
        what: str,
        before: str = "",
        known: Iterable[str] = (),
    ) -> None:
        """Raise ``GraphRefused("foreign-graph")`` unless every stamped element carries a known run id.

        ``stamps`` maps a kind of element (``"documents"``, ``"chunks"``, ``"links"``,
        ...) to its run stamps. Run nodes are looked up through ``queries`` (the
        batch's transaction, or the store's reader outside one), only for run ids not
        already known. ``what`` names the work refused; ``before`` says what
        earlier batches already removed, when any did; ``known`` are run ids the caller
        has just found run nodes for (in the same transaction), so they are not asked again.
        """
        self._known.update(known)
        runs = {run for counts in stamps.values() for run, n in counts.items() if run is not None and n}
        unknown = await self.unknown_runs(queries, runs)
        unstamped = [(kind, counts.get(None, 0)) for kind, counts in stamps.items() if counts.get(None, 0)]
        strangers = [
            (kind, sum(n for run, n in counts.items() if run in unknown))
            for kind, counts in stamps.items()
            if any(run in unknown for run in counts)
        ]
        if not unstamped and not strangers:
            return
        parts: list[str] = []
        if unstamped:
            parts.append(f"{carrying(unstamped)} no run id")
        if strangers:
            sample = ", ".join(repr(run) for run in sorted(unknown)[:3]) + (" ..." if len(unknown) > 3 else "")
            parts.append(f"{carrying(strangers)} run ids that name no ingestion run ({sample})")
        raise GraphRefused(
            FOREIGN_GRAPH,
            f"refused to remove {what}: {'; '.join(parts)}. graphrag-orm removes only what its ingestion "
            "runs wrote; this looks like a graph another tool wrote under the same labels (give the "
            f"toolkit a layout with labels of its own). {_unchanged(before)}",
        )

    @staticmethod
    def refuse(what: str, reason: str, before: str = "") -> GraphRefused:
        """A ``foreign-graph`` refusal for something other than run stamps (an unowned relationship)."""
        return GraphRefused(FOREIGN_GRAPH, f"refused to remove {what}: {reason}. {_unchanged(before)}")


def _unchanged(before: str) -> str:
    return f"Nothing of this batch was changed; {before}." if before else "Nothing was changed."


def stamps_from_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str | None, int]]:
    """Rows with ``kind``, ``run`` and ``elements`` as ``{kind: {run id: count}}``."""
    found: dict[str, dict[str | None, int]] = {}
    for row in rows:
        counts = found.setdefault(str(row["kind"]), {})
        run = row["run"]
        key = None if run is None else str(run)
        counts[key] = counts.get(key, 0) + int(row["elements"])
    return found
