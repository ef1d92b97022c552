"""Reading what a removal covers: documents by id, by run, all of them, and orphans. Reads only.

Documents are read in pages ordered by id (at most :data:`SCOPE_PAGE` ids held at a
time), so a scope of any size is removed with bounded memory. A document's size is
its stored ``lengthBytes``; a group of sections and chunks whose document is gone
(an orphan group) is sized by the end of its last chunk. A section or chunk without a
``documentId`` is never part of a scope: the toolkit always writes one. Each read is
a READ transaction of its own (:meth:`Store.read`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.maintenance.ownership import stamps_from_rows
from graphrag_orm.maintenance.reports import RemovalPreview, ResetScope
from graphrag_orm.maintenance.scope_statements import ScopeStatements
from graphrag_orm.store import Store, StoredNames

__all__ = ["SCOPE_PAGE", "DocumentSize", "NamedDocuments", "ScopeReader"]

#: Document ids read per page when a scope is walked.
SCOPE_PAGE = 10_000


@dataclass(frozen=True)
class DocumentSize:
    """One document of a scope: its id and its source size in UTF-8 bytes (the batch bound)."""

    document_id: str
    utf8_bytes: int


@dataclass(frozen=True)
class NamedDocuments:
    """The documents asked for by id: what exists (with sizes and run stamps) and what does not."""

    found: tuple[DocumentSize, ...]
    not_found: tuple[str, ...]
    stamps: dict[str | None, int]
    known_runs: frozenset[str]


class ScopeReader:
    """Walks the documents of a scope and counts what it holds."""

    def __init__(self, store: Store, names: StoredNames, allowed_types: Sequence[str] | None = None) -> None:
        self.store = store
        #: Relationship types maintenance may find on lexical nodes (structural, and the extension's).
        self.allowed_types = tuple(allowed_types or names.structural_types)
        self.statements = ScopeStatements.render(names, self.allowed_types)

    async def _pages(self, statement: str, name: str, parameters: dict[str, Any]) -> AsyncIterator[list[DocumentSize]]:
        after = ""
        while True:
            rows = (
                await self.store.read(statement, {**parameters, "after": after, "page": SCOPE_PAGE}, name=name)
            ).records
            if not rows:
                return
            yield [DocumentSize(str(row["id"]), int(row["bytes"])) for row in rows]
            if len(rows) < SCOPE_PAGE:
                return
            after = str(rows[-1]["id"])

    def all_documents(self) -> AsyncIterator[list[DocumentSize]]:
        """Every document node, in pages ordered by id (removal between pages is expected)."""
        return self._pages(self.statements.all_documents, "maintenance.scope.documents", {})

    def documents_of_runs(self, run_ids: Sequence[str]) -> AsyncIterator[list[DocumentSize]]:
        """Documents whose last write was by one of ``run_ids``, in pages ordered by id."""
        return self._pages(
            self.statements.documents_of_runs, "maintenance.scope.run_documents", {"runs": list(run_ids)}
        )

    def orphan_groups(self) -> AsyncIterator[list[DocumentSize]]:
        """Document ids that sections or chunks name but no document node has, in pages."""
        return self._pages(self.statements.orphan_groups, "maintenance.scope.orphan_groups", {})

    async def named_documents(self, document_ids: Sequence[str]) -> NamedDocuments:
        """The given ids (deduplicated, sorted): sizes, run stamps of their documents, and ids with nothing stored."""
        wanted = sorted(set(document_ids))
        found: list[DocumentSize] = []
        missing: list[str] = []
        stamps: dict[str | None, int] = {}
        known_runs: set[str] = set()
        for start in range(0, len(wanted), SCOPE_PAGE):
            named = await self.store.read(
                self.statements.named, {"ids": wanted[start : start + SCOPE_PAGE]}, name="maintenance.scope.named"
            )
            absent: list[str] = []
            for row in named:
                run = row["run"]
                if row["known"]:
                    known_runs.add(str(run))
                if row["found"]:
                    key = None if run is None else str(run)
                    stamps[key] = stamps.get(key, 0) + 1
                    found.append(DocumentSize(str(row["id"]), int(row["bytes"] or 0)))
                else:
                    absent.append(str(row["id"]))
            if absent:
                parts = await self.store.read(
                    self.statements.named_parts, {"ids": absent}, name="maintenance.scope.named_parts"
                )
                for row in parts:
                    if row["ends"]:
                        found.append(DocumentSize(str(row["id"]), max(int(end or 0) for end in row["ends"])))
                    else:
                        missing.append(str(row["id"]))
        found.sort(key=lambda item: item.document_id)
        return NamedDocuments(tuple(found), tuple(missing), stamps, frozenset(known_runs))

    async def graph_stamps(self) -> tuple[dict[str, dict[str | None, int]], list[tuple[str, int]]]:
        """Run stamps of every document, section, chunk and structural link under the layout's names,
        and the relationship types outside ``allowed_types`` found on those nodes, with counts."""
        rows = (await self.store.read(self.statements.graph_stamps, name="maintenance.scope.graph_stamps")).records
        stamps = stamps_from_rows(rows)
        if not any(row["other"] for row in rows):
            return stamps, []
        unowned = await self.store.read(
            self.statements.graph_unowned, {"allowed": list(self.allowed_types)}, name="maintenance.scope.graph_unowned"
        )
        return stamps, [(str(row["type"]), int(row["links"])) for row in unowned]

    async def orphan_stamps(self) -> dict[str, dict[str | None, int]]:
        """Run stamps of the sections and chunks whose document is gone."""
        return stamps_from_rows(
            (await self.store.read(self.statements.orphan_stamps, name="maintenance.scope.orphan_stamps")).records
        )

    async def unknown_runs_in_use(self, run_ids: Sequence[str]) -> dict[str | None, int]:
        """For run ids that name no run node: how many documents carry each (as run stamps)."""
        wanted = sorted(set(run_ids))
        known = await self.store.read(self.statements.runs_exist, {"runs": wanted}, name="maintenance.scope.runs_exist")
        unknown = sorted(set(wanted) - set(known.column("run")))
        if not unknown:
            return {}
        carried = await self.store.read(
            self.statements.run_documents, {"runs": unknown}, name="maintenance.scope.unknown_run_documents"
        )
        return {str(row["run"]): int(row["documents"]) for row in carried}

    async def preview(self, scope: ResetScope) -> RemovalPreview:
        """Documents, sections and chunks ``reset(scope)`` would remove, and the report findings it
        would retract or trim and the reports it would delete, counted by reading only."""
        if scope.is_everything:
            result = await self.store.read(self.statements.preview_everything, name="maintenance.preview")
        else:
            parameters = {"runs": list(scope.run_ids or ()), "ids": list(scope.document_ids or ())}
            result = await self.store.read(self.statements.preview_scope, parameters, name="maintenance.preview")
        row = result.records[0]
        return RemovalPreview(
            documents=int(row["documents"]),
            sections=int(row["sections"]),
            chunks=int(row["chunks"]),
            findings_retracted=int(row["findingsRetracted"]),
            findings_trimmed=int(row["findingsTrimmed"]),
            reports=int(row["reports"]),
        )
