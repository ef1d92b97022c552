"""Undoing one merge, in the one write transaction it is given (``tx``).

The run node is locked and read first (then every thing the undo touches, in the global
order of :mod:`graphrag_orm.resolution.locks`): an unknown id or a run that is not a merge is
``run-not-found``, an undone one ``already-undone``, one recorded under another ontology
``ontology-changed``. Then, each locked before it is read, everything the merge left must
be as it left it: the kept thing's properties, every moved mention and quote (by key, on
the kept thing, same chunk and properties), every fact it created or unioned into, the
other ends of the merged thing's facts; and no thing may hold the merged thing's id again.
Anything else is ``written-since`` (re-ingesting a document, a later merge into the same
thing): putting the record back would lose or duplicate that write. Every check comes
before the first write, so a refusal leaves the graph as it was.

Then the merged thing is recreated (labels and properties), the facts the merge created are
deleted, the unioned facts get their properties back, the mentions and quotes move back,
the merged thing's facts are recreated, the kept thing's properties are put back and the
run is marked Undone.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import UndoRefused
from graphrag_orm.ontology import Ontology
from graphrag_orm.resolution.locks import lock_things
from graphrag_orm.resolution.merge import seen_facts
from graphrag_orm.resolution.moves import SeenFact
from graphrag_orm.resolution.record import MERGE_PREFIX, MergeRecord
from graphrag_orm.resolution.statements import ResolutionStatements
from graphrag_orm.resolution.values import UndoReport
from graphrag_orm.store import Queries

__all__ = ["UNDONE", "Undoer"]

UNDONE = "Undone"


def _since(what: str) -> UndoRefused:
    return UndoRefused(ErrorCode.WRITTEN_SINCE, f"refused: {what} was written since the merge; nothing was changed")


class Undoer:
    """Puts one merge back; see the module's docstring."""

    def __init__(self, ontology: Ontology, statements: ResolutionStatements) -> None:
        self.ontology = ontology
        self.statements = statements
        self.link_types = [ontology.mention_type, *ontology.quote_types]
        self.fact_types = list(ontology.fact_types)

    async def undo(self, tx: Queries, run_id: str) -> UndoReport:
        record = await self._record(tx, run_id)
        kept, ends = await self._things(tx, record)
        links = await self._links(tx, record, kept)
        kept_facts = await self._kept_facts(tx, record, kept, ends)
        # Every check passed: write.
        created = await tx.run(
            self.statements.create_thing,
            {"labels": record.merged_labels, "props": record.merged_props},
            name="resolution.undo.thing",
        )
        ends[record.merged_id] = str(created.value("element"))
        ends[record.kept_id] = kept
        removed = [kept_facts[f.key].element for f in record.created] + [link["element"] for link in links]
        await tx.run(self.statements.delete_relationships, {"ids": removed}, name="resolution.undo.unlink")
        if record.unioned:
            rows = [{"id": kept_facts[u.key].element, "props": u.before} for u in record.unioned]
            await tx.run(self.statements.set_relationships, {"rows": rows}, name="resolution.undo.facts.reset")
        await self._create(tx, self._link_rows(record, ends[record.merged_id], links), "links")
        await self._create(tx, self._fact_rows(record, ends), "facts")
        await tx.run(
            self.statements.set_thing, {"thing": kept, "props": record.kept_before}, name="resolution.undo.kept"
        )
        await tx.run(self.statements.set_run_status, {"id": run_id, "status": UNDONE}, name="resolution.undo.run")
        quotes = sum(1 for link in record.links if link.type != self.ontology.mention_type)
        return UndoReport(
            run_id=run_id,
            kind=record.kind,
            kept_id=record.kept_id,
            merged_id=record.merged_id,
            mentions=len(record.links) - quotes,
            quotes=quotes,
            facts_restored=len(record.removed),
            facts_removed=len(record.created),
            facts_reset=len(record.unioned),
        )

    async def _record(self, tx: Queries, run_id: str) -> MergeRecord:
        row = (await tx.run(self.statements.lock_run, {"id": run_id}, name="resolution.undo.run.lock")).single()
        fingerprint = str((row or {}).get("fingerprint") or "")
        if row is None or not fingerprint.startswith(MERGE_PREFIX) or not row.get("record"):
            raise UndoRefused(ErrorCode.RUN_NOT_FOUND, f"no merge run {run_id[:48]!r}")
        if row.get("status") == UNDONE:
            raise UndoRefused(ErrorCode.ALREADY_UNDONE, f"merge run {run_id[:48]!r} is already undone")
        if fingerprint != MERGE_PREFIX + self.ontology.fingerprint:
            raise UndoRefused(
                ErrorCode.ONTOLOGY_CHANGED,
                f"merge run {run_id[:48]!r} was recorded under another ontology; undo it with that ontology",
            )
        record = MergeRecord.from_json(str(row["record"]))
        known = {*self.link_types, *self.fact_types}
        types = {link.type for link in record.links} | {f.type for f in record.removed}
        if record.kind not in self.ontology.kinds or not types <= known:
            raise UndoRefused(ErrorCode.ONTOLOGY_CHANGED, f"merge run {run_id[:48]!r} names types this ontology lacks")
        return record

    async def _things(self, tx: Queries, record: MergeRecord) -> tuple[str, dict[str, str]]:
        """Lock the kept thing, the merged thing's id and the other ends of its facts (see :mod:`.locks`);
        the kept thing's element id and the ends' element ids by thing id."""
        wanted: dict[str, set[str]] = defaultdict(set)
        wanted[record.kind] |= {record.kept_id, record.merged_id}
        for fact in record.removed:
            if fact.other not in (record.kept_id, record.merged_id):
                wanted[fact.other_kind].add(fact.other)
        found = await lock_things(tx, self.statements, self.ontology, wanted)
        if record.merged_id in found:
            raise _since("the merged thing (extracted again)")
        kept = found.get(record.kept_id)
        if kept is None or dict(kept["props"]) != record.kept_after:
            raise _since("the kept thing")
        ends = {id_: str(row["element"]) for id_, row in found.items() if id_ != record.kept_id}
        if any(other not in ends for ids in wanted.values() for other in ids - {record.kept_id, record.merged_id}):
            raise _since("the other end of a fact (deleted)")
        return str(kept["element"]), ends

    async def _links(self, tx: Queries, record: MergeRecord, kept: str) -> list[dict[str, Any]]:
        if not record.links:
            return []
        keys = [link.props.get("key") for link in record.links]
        result = await tx.run(
            self.statements.links_by_key,
            {"thing": kept, "links": self.link_types, "keys": keys},
            name="resolution.undo.links",
        )
        found = {(row["type"], row["props"].get("key")): row for row in result}
        for link in record.links:
            row = found.get((link.type, link.props.get("key")))
            if row is None or str(row["chunk"]) != link.chunk or dict(row["props"]) != link.props:
                raise _since("a moved mention or quote")
        return [found[(link.type, link.props.get("key"))] for link in record.links]

    async def _kept_facts(
        self, tx: Queries, record: MergeRecord, kept: str, ends: dict[str, str]
    ) -> dict[tuple[bool, str, str], SeenFact]:
        if not record.created and not record.unioned:
            return {}
        others = sorted({ends[f.other] for f in record.created} | {ends[u.other] for u in record.unioned})
        result = await tx.run(
            self.statements.facts_with,
            {"thing": kept, "facts": self.fact_types, "others": others},
            name="resolution.undo.facts",
        )
        found = {fact.key: fact for fact in seen_facts(self.ontology, result)}
        for created in record.created:
            if created.key not in found or found[created.key].props != created.props:
                raise _since("a fact the merge moved")
        for unioned in record.unioned:
            if unioned.key not in found or found[unioned.key].props != unioned.after:
                raise _since("a fact the merge unioned")
        return found

    def _link_rows(self, record: MergeRecord, merged: str, links: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {"type": link.type, "start": merged, "end": row["end"], "props": link.props}
            for link, row in zip(record.links, links, strict=True)
        ]

    def _fact_rows(self, record: MergeRecord, ends: dict[str, str]) -> list[dict[str, Any]]:
        rows = []
        for fact in record.removed:
            merged, other = ends[record.merged_id], ends[fact.other]
            start, end = (merged, other) if fact.outgoing else (other, merged)
            rows.append({"type": fact.type, "start": start, "end": end, "props": fact.props})
        return rows

    async def _create(self, tx: Queries, rows: list[dict[str, Any]], what: str) -> None:
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            by_type[row.pop("type")].append(row)
        for relationship_type, typed in sorted(by_type.items()):
            await tx.run(
                self.statements.create_relationships[relationship_type],
                {"rows": typed},
                name=f"resolution.undo.{what}",
            )
