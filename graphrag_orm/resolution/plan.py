"""A merge plan: the suggestions a person accepted, previewed, then applied one merge at a time.

:meth:`MergePlan.preview` reads (one statement per class) and writes nothing: the counts of
each merge and the blockers: a thing merged twice (``merged-twice``), kept in one merge and
merged in another (``kept-and-merged``), gone (``thing-gone``) or changed (``thing-changed``:
its name or aliases differ from the suggestion, or it became a placeholder) since.

:meth:`MergePlan.apply` refuses a plan with blockers (``merge-blocked``, nothing written).
Each merge is its own write transaction (:mod:`graphrag_orm.resolution.merge`), retried whole
on a transient error; a merge that fails raises :class:`~graphrag_orm.errors.MergeError`
(``merge-failed``) naming it and the runs applied before it, in plan order, the cause
chained. A merge's run id is chosen before its transaction, so when a commit's outcome is
lost the run node is looked for: if it exists the merge was written and is listed too.
Cancellation is not caught: the merges applied before it are the runs whose fingerprint
starts with ``merge:``.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from neo4j.exceptions import Neo4jError

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError, GraphRagError, MergeError
from graphrag_orm.ontology import Ontology, split_aliases
from graphrag_orm.resolution.merge import Merger
from graphrag_orm.resolution.moves import SeenFact, merged_aliases, plan_facts
from graphrag_orm.resolution.statements import ResolutionStatements
from graphrag_orm.resolution.values import Blocker, MergeCounts, MergePreview, Suggestion
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.tracing import SpanName, span

__all__ = ["MergePlan", "Progress"]

#: Called after each merge applied: (merges applied, merges in the plan).
Progress = Callable[[int, int], None]
#: Attempts of one merge's transaction on a transient error (a deadlock with ingestion).
MERGE_ATTEMPTS = 5


class MergePlan:
    """The accepted suggestions, in the order they will be applied."""

    def __init__(
        self,
        store: Store,
        ontology: Ontology,
        statements: ResolutionStatements,
        merger: Merger,
        accepted: Sequence[Suggestion],
    ) -> None:
        for suggestion in accepted:
            if suggestion.kind not in ontology.kinds:
                raise ConfigurationError(
                    ErrorCode.INVALID_OPTION, f"a suggestion names kind {suggestion.kind!r}, not in the ontology"
                )
        self.store = store
        self.ontology = ontology
        self.statements = statements
        self.merger = merger
        self.merges: tuple[Suggestion, ...] = tuple(accepted)

    async def preview(self) -> MergePreview:
        """Counts and blockers; reads only."""
        blockers = self._plan_blockers()
        rows = await self._read_state()
        counts: list[MergeCounts] = []
        for index, suggestion in enumerate(self.merges):
            row = rows[index]
            blockers.extend(self._state_blockers(index, suggestion, row))
            counts.append(self._counts(index, suggestion, row))
        blockers.sort(key=lambda b: (b.merge, b.code.value, b.thing_id))
        return MergePreview(merges=tuple(counts), blockers=tuple(blockers))

    def _plan_blockers(self) -> list[Blocker]:
        merged = Counter(s.merged.id for s in self.merges)
        kept = {s.kept.id for s in self.merges}
        found: list[Blocker] = []
        for index, suggestion in enumerate(self.merges):
            if merged[suggestion.merged.id] > 1:
                found.append(Blocker(code=ErrorCode.MERGED_TWICE, merge=index, thing_id=suggestion.merged.id))
            if suggestion.merged.id in kept:
                found.append(Blocker(code=ErrorCode.KEPT_AND_MERGED, merge=index, thing_id=suggestion.merged.id))
        return found

    async def _read_state(self) -> dict[int, dict[str, Any]]:
        by_kind: dict[str, list[int]] = defaultdict(list)
        for index, suggestion in enumerate(self.merges):
            by_kind[suggestion.kind].append(index)
        found: dict[int, dict[str, Any]] = {}
        for kind, indexes in by_kind.items():
            pairs = [{"i": i, "kept": self.merges[i].kept.id, "merged": self.merges[i].merged.id} for i in indexes]
            result = await self.store.read(
                self.statements.preview[kind],
                {"rows": pairs, "facts": list(self.ontology.fact_types), "quotes": list(self.ontology.quote_types)},
                name="resolution.preview",
            )
            found.update({int(row["i"]): row for row in result})
        return found

    @staticmethod
    def _state_blockers(index: int, suggestion: Suggestion, row: dict[str, Any]) -> list[Blocker]:
        found: list[Blocker] = []
        for side, ref in (("kept", suggestion.kept), ("merged", suggestion.merged)):
            if not row[f"{side}Found"]:
                found.append(Blocker(code=ErrorCode.THING_GONE, merge=index, thing_id=ref.id))
            elif (
                row[f"{side}Name"] != ref.name
                or tuple(split_aliases(row[f"{side}Aliases"])) != ref.aliases
                or row[f"{side}Placeholder"]
            ):
                found.append(Blocker(code=ErrorCode.THING_CHANGED, merge=index, thing_id=ref.id))
        return found

    @staticmethod
    def _counts(index: int, suggestion: Suggestion, row: dict[str, Any]) -> MergeCounts:
        def seen(items: list[dict[str, Any]]) -> list[SeenFact]:
            return [SeenFact(type=i["type"], outgoing=bool(i["outgoing"]), other_id=str(i["other"])) for i in items]

        kept_id, merged_id = suggestion.kept.id, suggestion.merged.id
        moves = plan_facts(kept_id, merged_id, seen(row["mergedFacts"]), seen(row["keptFacts"]))
        _, added = merged_aliases(
            suggestion.kept.name, row["keptAliases"], suggestion.merged.name, row["mergedAliases"]
        )
        return MergeCounts(
            merge=index,
            kind=suggestion.kind,
            kept_id=kept_id,
            merged_id=merged_id,
            mentions=int(row["mentions"]),
            quotes=int(row["quotes"]),
            facts_repointed=len(moves.repointed),
            facts_unioned=len(moves.unioned),
            self_facts_dropped=len(moves.dropped),
            aliases_added=added if row["mergedFound"] else 0,
        )

    async def apply(self, progress: Progress | None = None) -> tuple[str, ...]:
        """Apply every merge, each in its own transaction; the run ids in plan order."""
        preview = await self.preview()
        if preview.blocked:
            codes = ", ".join(sorted({b.code.value for b in preview.blockers}))
            raise MergeError(
                ErrorCode.MERGE_BLOCKED,
                f"the plan has {len(preview.blockers)} blockers ({codes}); nothing was merged",
            )
        applied: list[str] = []
        for index, suggestion in enumerate(self.merges):
            run_id = f"merge-{uuid.uuid4().hex}"
            try:
                await self._apply_one(index, suggestion, run_id)
            except Exception as error:
                raise await self._failure(index, suggestion, run_id, applied, error) from error
            applied.append(run_id)
            if progress is not None:
                progress(len(applied), len(self.merges))
        return tuple(applied)

    async def _apply_one(self, index: int, suggestion: Suggestion, run_id: str) -> MergeCounts:
        with span(SpanName.MERGE, run_id=run_id, merges=1) as recorder:

            async def work(tx: StoreTransaction) -> MergeCounts:
                return await self.merger.merge(tx, suggestion, index, run_id)

            counts = await self.store.write(work, attempts=MERGE_ATTEMPTS)
            recorder.set("items", counts.mentions + counts.quotes)
            recorder.set("facts", counts.facts_repointed + counts.facts_unioned + counts.self_facts_dropped)
            return counts

    async def _failure(
        self, index: int, suggestion: Suggestion, run_id: str, applied: list[str], error: Exception
    ) -> MergeError:
        written = False
        try:
            written = bool(
                (await self.store.read(self.statements.run_exists, {"id": run_id}, name="resolution.run.exists")).value(
                    "found", False
                )
            )
        except Exception:  # the database is gone too: the merge is reported as not written
            written = False
        listed = (*applied, run_id) if written else tuple(applied)
        if isinstance(error, GraphRagError):
            reason = error.code
        elif isinstance(error, Neo4jError):
            reason = error.code or type(error).__name__
        else:
            reason = type(error).__name__
        outcome = "its commit's outcome was lost but it was written" if written else "nothing of it was written"
        return MergeError(
            ErrorCode.MERGE_FAILED,
            f"merge {index + 1} of {len(self.merges)} ({suggestion.kind}) failed ({reason}); {outcome}; "
            f"{len(listed)} merges applied",
            failed=suggestion,
            applied_run_ids=listed,
        )
