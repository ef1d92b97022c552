"""``Resolution``: suggest merges of things that are probably one, plan them, undo any exactly.

Extraction resolves things by exact normalised name, so one thing can arrive twice
("Caterpillar" and "the Caterpillar"). Merging is a judgement: the toolkit suggests
(:meth:`Resolution.suggest`, rules in :mod:`graphrag_orm.resolution.suggestions`), a person
decides, :meth:`Resolution.plan` previews and applies the accepted ones
(:mod:`graphrag_orm.resolution.plan`), and :meth:`Resolution.undo` puts any merge back
(:mod:`graphrag_orm.resolution.undo`). Nothing is merged automatically.

Suggestions read, per class, at most ``max_things`` things in id order (id, name, aliases,
placeholder flag and mention count; one statement per class) and return at most
``max_suggestions``; each bound reached is in ``limits_reached``.

In a tenanted graph (docs/tenancy.md) everything is the store's tenant's: suggestions read the
tenant's things and count their mentions in the tenant's chunks, a plan names only the
tenant's things (another tenant's id is ``thing-gone``), a merge moves the tenant's mentions,
quotes and facts and records its run with the tenant, and undo finds the tenant's runs only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology, split_aliases
from graphrag_orm.resolution.merge import Merger
from graphrag_orm.resolution.plan import MergePlan
from graphrag_orm.resolution.statements import ResolutionStatements
from graphrag_orm.resolution.suggestions import MergeCandidate, suggest_within
from graphrag_orm.resolution.undo import Undoer
from graphrag_orm.resolution.values import Suggestion, Suggestions, SuggestOptions, UndoReport
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.tenancy import check_fenced
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

if TYPE_CHECKING:
    from graphrag_orm.facade import GraphRag

__all__ = ["Resolution"]


class Resolution:
    """Entity resolution over the graph of ``rag`` (a ``GraphRag`` with an ontology)."""

    def __init__(self, rag: GraphRag) -> None:
        if rag.ontology is None:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "entity resolution needs a GraphRag with an ontology")
        self._setup(rag.store, rag.model, rag.ontology)

    @classmethod
    def from_parts(cls, store: Store, model: LexicalModel, ontology: Ontology) -> Resolution:
        """A resolution over ``store`` without a facade (tests, tools)."""
        resolution = cls.__new__(cls)
        resolution._setup(store, model, ontology)
        return resolution

    def _setup(self, store: Store, model: LexicalModel, ontology: Ontology) -> None:
        # A tenanted graph's resolution is the tenant's, filtered in each statement (docs/tenancy.md):
        # a tenanted store needs the tenanted layout's model, and the reverse a tenanted store.
        check_fenced(model.layout.tenanted, store.tenanted, "entity resolution")
        ontology.check_layout(model.layout)
        self.store = store
        self.model = model
        self.ontology = ontology
        self.statements = ResolutionStatements.render(model.names, ontology)
        self._merger = Merger(model.names, ontology, self.statements)
        self._undoer = Undoer(ontology, self.statements)

    async def suggest(self, options: SuggestOptions | None = None) -> Suggestions:
        """Pairs of one class that are probably one, in a stable order; reads only."""
        options = options or SuggestOptions()
        found: list[Suggestion] = []
        limits: list[Limit] = []
        for kind in self.ontology.kinds:
            result = await self.store.read(
                self.statements.candidates[kind], {"limit": options.max_things + 1}, name="resolution.candidates"
            )
            rows = result.records
            if len(rows) > options.max_things:
                rows = rows[: options.max_things]
                if not limits:
                    limits.append(Limit(name=LimitName.MAX_THINGS, value=options.max_things))
            things = [
                MergeCandidate(
                    id=str(row["id"]),
                    name=str(row["name"]),
                    aliases=tuple(split_aliases(row["aliases"])),
                    placeholder=bool(row["placeholder"]) or self.ontology.is_placeholder(str(row["name"])),
                    mentions=int(row["mentions"]),
                )
                for row in rows
            ]
            found.extend(suggest_within(kind, things))
        if len(found) > options.max_suggestions:
            found = found[: options.max_suggestions]
            limits.append(Limit(name=LimitName.MAX_SUGGESTIONS, value=options.max_suggestions))
        return Suggestions(suggestions=tuple(found), limits_reached=tuple(limits))

    def plan(self, accepted: Sequence[Suggestion]) -> MergePlan:
        """A plan of the accepted suggestions, applied in their order."""
        return MergePlan(self.store, self.ontology, self.statements, self._merger, accepted)

    async def undo(self, run_id: str) -> UndoReport:
        """Put one merge back in one transaction, or refuse (``UndoRefused``) with the graph unchanged."""
        # The run id is a caller's string until the run is found: it reaches the span only then.
        with span(SpanName.UNDO_MERGE) as recorder:

            async def work(tx: StoreTransaction) -> UndoReport:
                return await self._undoer.undo(tx, run_id)

            report = await self.store.write(work)
            recorder.set("run_id", report.run_id)
            recorder.set("items", report.mentions + report.quotes)
            recorder.set("facts", report.facts_restored)
            return report
