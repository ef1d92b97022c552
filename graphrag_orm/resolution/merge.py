"""One merge, inside the write transaction it is given (``tx``), with its run record.

Order: both things and the other ends of the merged thing's facts are locked (no-op write,
then read) in the global order of :mod:`graphrag_orm.resolution.locks`, then the merged
thing's mentions, quotes and facts and the kept thing's facts to the same other ends, each
locked before it is read. Then, still in
``tx``: mentions and quotes move to the kept thing with every property (the ``key`` too:
keys are unique per type and hash the chunk, the start byte and the thing that was
extracted, so a moved key never collides, and re-ingestion's ``retract_knowledge`` finds
moved mentions by their chunk, whatever their key); facts are re-pointed, unioned or
dropped (:mod:`graphrag_orm.resolution.moves`); the merged thing's name and aliases become
aliases of the kept thing; the merged thing is deleted (the database refuses when it still
has relationships the ontology does not name, and the merge fails whole); and the run node
with its record (:mod:`graphrag_orm.resolution.record`) is created.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import MergeError
from graphrag_orm.ontology import Ontology, split_aliases
from graphrag_orm.resolution.locks import lock_things
from graphrag_orm.resolution.moves import FactMoves, SeenFact, merged_aliases, plan_facts
from graphrag_orm.resolution.record import MERGE_PREFIX, FactRecord, LinkRecord, MergeRecord, UnionRecord, check_exact
from graphrag_orm.resolution.statements import ResolutionStatements, entity_stored
from graphrag_orm.resolution.values import MergeCounts, Suggestion
from graphrag_orm.store import Queries, StoredNames

__all__ = ["Merger", "kind_of", "seen_facts"]


def kind_of(ontology: Ontology, labels: list[str]) -> str:
    """The ontology kind a thing's labels name ("" when none does)."""
    for kind in ontology.kinds:
        if ontology.label_of(kind) in labels:
            return kind
    return ""


def seen_facts(ontology: Ontology, rows: Any) -> list[SeenFact]:
    return [
        SeenFact(
            type=row["type"],
            outgoing=bool(row["outgoing"]),
            other_id=str(row["otherId"]),
            props=dict(row["props"]),
            element=row["element"],
            other_element=row["other"],
            other_kind=kind_of(ontology, list(row["otherLabels"])),
        )
        for row in rows
    ]


class Merger:
    """Applies one suggestion in a transaction; see the module's docstring."""

    def __init__(self, names: StoredNames, ontology: Ontology, statements: ResolutionStatements) -> None:
        self.names = names
        self.ontology = ontology
        self.statements = statements
        self.link_types = [ontology.mention_type, *ontology.quote_types]
        self.fact_types = list(ontology.fact_types)

    async def merge(self, tx: Queries, suggestion: Suggestion, index: int, run_id: str) -> MergeCounts:
        kept, merged, locked = await self._lock_things(tx, suggestion, index)
        links = list(
            await tx.run(
                self.statements.links_of,
                {"thing": merged["element"], "links": self.link_types},
                name="resolution.links",
            )
        )
        merged_facts = seen_facts(
            self.ontology,
            await tx.run(
                self.statements.facts_of,
                {"thing": merged["element"], "facts": self.fact_types},
                name="resolution.facts.merged",
            ),
        )
        late: dict[str, set[str]] = defaultdict(set)
        for seen in merged_facts:
            if seen.other_id not in locked:  # a fact written between the first read and the locks
                late[seen.other_kind].add(seen.other_id)
        if late:
            await lock_things(tx, self.statements, self.ontology, late)
        others = sorted({f.other_element for f in merged_facts if f.other_id not in (kept["id"], merged["id"])})
        kept_facts = seen_facts(
            self.ontology,
            await tx.run(
                self.statements.facts_with,
                {"thing": kept["element"], "facts": self.fact_types, "others": others},
                name="resolution.facts.kept",
            ),
        )
        moves = plan_facts(kept["id"], merged["id"], merged_facts, kept_facts)
        await self._move_links(tx, kept, links)
        await self._move_facts(tx, kept, merged_facts, moves)
        stored = entity_stored("aliases")
        aliases, added = merged_aliases(
            suggestion.kept.name, kept["props"].get(stored), suggestion.merged.name, merged["props"].get(stored)
        )
        after_props = {k: v for k, v in {**kept["props"], stored: aliases}.items() if v is not None}
        result = await tx.run(
            self.statements.set_thing, {"thing": kept["element"], "props": after_props}, name="resolution.kept"
        )
        kept_after = dict(result.value("props", {}))
        await tx.run(self.statements.delete_thing, {"thing": merged["element"]}, name="resolution.delete")
        record = self._record(suggestion, kept, merged, kept_after, links, moves)
        await self._create_run(tx, run_id, check_exact(record))
        quotes = sum(1 for link in links if link["type"] != self.ontology.mention_type)
        return MergeCounts(
            merge=index,
            kind=suggestion.kind,
            kept_id=kept["id"],
            merged_id=merged["id"],
            mentions=len(links) - quotes,
            quotes=quotes,
            facts_repointed=len(moves.repointed),
            facts_unioned=len(moves.unioned),
            self_facts_dropped=len(moves.dropped),
            aliases_added=added,
        )

    async def _lock_things(
        self, tx: Queries, suggestion: Suggestion, index: int
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]]:
        """Lock both things and the other ends of the merged thing's facts (see :mod:`.locks`); check both."""
        ends = await tx.run(
            self.statements.fact_ends[suggestion.kind],
            {"id": suggestion.merged.id, "facts": self.fact_types},
            name="resolution.ends",
        )
        wanted: dict[str, set[str]] = defaultdict(set)
        wanted[suggestion.kind] |= {suggestion.kept.id, suggestion.merged.id}
        for end in ends:
            kind = kind_of(self.ontology, list(end["labels"]))
            if kind:
                wanted[kind].add(str(end["id"]))
        found = await lock_things(tx, self.statements, self.ontology, wanted)
        for ref in (suggestion.kept, suggestion.merged):
            row = found.get(ref.id)
            if row is None:
                raise MergeError(ErrorCode.THING_GONE, f"merge {index + 1}: thing {ref.id[:12]} is gone")
            props = row["props"]
            if (
                props.get(entity_stored("name")) != ref.name
                or tuple(split_aliases(props.get(entity_stored("aliases")))) != ref.aliases
                or props.get(entity_stored("is_placeholder"))
            ):
                raise MergeError(
                    ErrorCode.THING_CHANGED, f"merge {index + 1}: thing {ref.id[:12]} changed since the suggestion"
                )
        return found[suggestion.kept.id], found[suggestion.merged.id], found

    async def _move_links(self, tx: Queries, kept: dict[str, Any], links: list[dict[str, Any]]) -> None:
        if not links:
            return
        # Deleted first: the moved relationship keeps its key, which is unique per type.
        await tx.run(
            self.statements.delete_relationships, {"ids": [link["element"] for link in links]}, name="resolution.unlink"
        )
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for link in links:
            by_type[link["type"]].append({"start": kept["element"], "end": link["end"], "props": link["props"]})
        for link_type, rows in sorted(by_type.items()):
            await tx.run(self.statements.create_relationships[link_type], {"rows": rows}, name="resolution.links.move")

    async def _move_facts(
        self, tx: Queries, kept: dict[str, Any], merged_facts: list[SeenFact], moves: FactMoves
    ) -> None:
        if merged_facts:
            await tx.run(
                self.statements.delete_relationships,
                {"ids": [fact.element for fact in merged_facts]},
                name="resolution.facts.delete",
            )
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for fact in moves.repointed:
            ends = (kept["element"], fact.other_element) if fact.outgoing else (fact.other_element, kept["element"])
            by_type[fact.type].append({"start": ends[0], "end": ends[1], "props": fact.props})
        for fact_type, rows in sorted(by_type.items()):
            await tx.run(
                self.statements.create_relationships[fact_type], {"rows": rows}, name="resolution.facts.repoint"
            )
        if moves.unioned:
            rows = [{"id": target.element, "props": props} for _, target, props in moves.unioned]
            await tx.run(self.statements.set_relationships, {"rows": rows}, name="resolution.facts.union")

    def _record(
        self,
        suggestion: Suggestion,
        kept: dict[str, Any],
        merged: dict[str, Any],
        kept_after: dict[str, Any],
        links: list[dict[str, Any]],
        moves: FactMoves,
    ) -> MergeRecord:
        def fact(seen: SeenFact) -> FactRecord:
            return FactRecord(seen.type, seen.outgoing, seen.other_id, seen.other_kind, seen.props)

        unioned: dict[tuple[bool, str, str], UnionRecord] = {}
        for _, target, props in moves.unioned:
            unioned[target.key] = UnionRecord(
                target.type, target.outgoing, target.other_id, target.other_kind, target.props, props
            )
        return MergeRecord(
            ontology=self.ontology.fingerprint,
            kind=suggestion.kind,
            kept_id=kept["id"],
            merged_id=merged["id"],
            merged_labels=sorted(merged["labels"]),
            merged_props=dict(merged["props"]),
            kept_before=dict(kept["props"]),
            kept_after=kept_after,
            links=[LinkRecord(link["type"], str(link["chunk"]), dict(link["props"])) for link in links],
            removed=[fact(seen) for seen in [*moves.repointed, *(m for m, _, _ in moves.unioned), *moves.dropped]],
            created=[fact(seen) for seen in moves.repointed],
            unioned=list(unioned.values()),
        )

    async def _create_run(self, tx: Queries, run_id: str, record: str) -> None:
        now = datetime.now(UTC)
        props = self.names.run.row(
            {
                "uid": run_id,
                "started_at": now,
                "completed_at": now,
                "status": "Completed",
                "settings_fingerprint": MERGE_PREFIX + self.ontology.fingerprint,
                "documents_ingested": 0,
                "documents_unchanged": 0,
                "documents_failed": 0,
                "chunks_written": 0,
            }
        )
        props = {key: value for key, value in props.items() if value is not None}
        await tx.run(self.statements.create_run, {"props": props, "record": record}, name="resolution.run")
