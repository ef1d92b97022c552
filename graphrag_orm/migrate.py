"""Reviewed schema migrations: revision files, one linear chain, a journal in the database.

A revision is a JSON file (``graphrag-orm-migration/1``) that names its own id
(``revision``), its predecessor (``down_revision``), the reviewed steps and a
checksum of them, so the chain is data, not convention. The database records each
applied revision in a small journal (``GraphRagMigration`` nodes). ``plan`` renders
the exact Cypher and changes nothing; ``status`` and ``check`` only read.

Refusals (``MigrationError.code``): ``unreviewed-edit`` (a file whose checksum does
not match its steps), ``checksum-mismatch`` (an applied revision whose file changed),
``branched-chain`` (two revisions claim one predecessor), ``broken-chain`` (a
predecessor that does not exist, no root, or several), ``predecessor-not-head``
(the database's head is not the revision's predecessor), ``unknown-revision`` (the
journal holds a revision the chain does not), ``equivalent-schema`` (an equivalent
index or constraint exists under another name: stop for review), ``schema-conflict``
(the name exists with another definition, e.g. other vector dimensions),
``index-not-online`` (an index did not come ONLINE within the bound).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any

from neomodel import adb
from pydantic import TypeAdapter

from graphrag_orm.embeddings.sets import EmbeddingSet, Similarity
from graphrag_orm.errors import MigrationError
from graphrag_orm.layout import Layout
from graphrag_orm.schema import (
    CreateStep,
    DropStep,
    FullTextAnalyzer,
    FullTextIndex,
    MigrationStep,
    RangeIndex,
    Schema,
    SchemaContributor,
    SchemaDefinition,
    UniqueConstraint,
    VectorIndex,
)
from graphrag_orm.store import Store
from graphrag_orm.store.introspection import LiveDefinition, read_live_schema
from graphrag_orm.values import Value

FORMAT = "graphrag-orm-migration/1"
JOURNAL_LABEL = "GraphRagMigration"
JOURNAL_CONSTRAINT = "graphrag_migration_revision_unique"
DEFAULT_INDEX_TIMEOUT_SECONDS = 300.0
MAX_INDEX_TIMEOUT_SECONDS = 3600.0
_REVISION_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.-]{0,99}")
_STEPS = TypeAdapter(tuple[MigrationStep, ...])


def _canonical(revision: str, down_revision: str | None, steps: Sequence[MigrationStep]) -> str:
    body = {
        "revision": revision,
        "down_revision": down_revision,
        "steps": [step.model_dump(mode="json") for step in steps],
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def checksum_of(revision: str, down_revision: str | None, steps: Sequence[MigrationStep]) -> str:
    """``sha256:<hex>`` of the revision's id, predecessor and steps (canonical JSON)."""
    digest = hashlib.sha256(_canonical(revision, down_revision, steps).encode("utf-8")).hexdigest()
    return f"sha256:{digest}"


class Revision(Value):
    """One reviewed revision: its id, predecessor, message, steps and checksum."""

    revision: str
    down_revision: str | None
    message: str
    steps: tuple[MigrationStep, ...]
    checksum: str

    @property
    def computed_checksum(self) -> str:
        return checksum_of(self.revision, self.down_revision, self.steps)

    def cypher(self) -> list[str]:
        """The exact statements ``apply`` runs for this revision, in order."""
        return [step.cypher() for step in self.steps]

    def to_file_json(self) -> str:
        body = {
            "format": FORMAT,
            "revision": self.revision,
            "down_revision": self.down_revision,
            "message": self.message,
            "checksum": self.checksum,
            "steps": [step.model_dump(mode="json") for step in self.steps],
        }
        return json.dumps(body, indent=2) + "\n"

    @classmethod
    def new(cls, revision: str, down_revision: str | None, message: str, steps: Sequence[MigrationStep]) -> Revision:
        if not _REVISION_ID.fullmatch(revision):
            raise MigrationError("invalid-revision", f"revision id {revision!r} must match {_REVISION_ID.pattern}")
        return cls(
            revision=revision,
            down_revision=down_revision,
            message=message,
            steps=tuple(steps),
            checksum=checksum_of(revision, down_revision, steps),
        )

    @classmethod
    def from_file(cls, path: Path, text: str) -> Revision:
        try:
            body = json.loads(text)
        except json.JSONDecodeError as error:
            raise MigrationError("invalid-revision", f"{path.name}: not JSON ({error})") from None
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            raise MigrationError("invalid-revision", f"{path.name}: not a {FORMAT} file")
        try:
            revision = cls(
                revision=body["revision"],
                down_revision=body.get("down_revision"),
                message=body.get("message", ""),
                steps=_STEPS.validate_python(body["steps"]),
                checksum=body["checksum"],
            )
        except (KeyError, ValueError) as error:
            raise MigrationError("invalid-revision", f"{path.name}: {error}") from None
        if revision.checksum != revision.computed_checksum:
            raise MigrationError(
                "unreviewed-edit",
                f"{path.name}: its steps changed but its checksum did not ({revision.checksum} recorded, "
                f"{revision.computed_checksum} computed); review the change and record the new checksum, "
                "or add a new revision instead of editing this one",
            )
        return revision


@dataclass(frozen=True)
class Chain:
    """A linear chain of revisions, root first. Loading validates it."""

    revisions: tuple[Revision, ...]
    source: str = ""

    @property
    def head(self) -> str | None:
        return self.revisions[-1].revision if self.revisions else None

    def get(self, revision: str) -> Revision | None:
        for candidate in self.revisions:
            if candidate.revision == revision:
                return candidate
        return None

    def index_of(self, revision: str | None) -> int:
        """Position of ``revision`` (-1 for None, the empty base)."""
        if revision is None:
            return -1
        for position, candidate in enumerate(self.revisions):
            if candidate.revision == revision:
                return position
        raise MigrationError("unknown-revision", f"revision {revision!r} is not in the chain {self.source}")

    def definitions_at(self, revision: str | None = None) -> dict[str, SchemaDefinition]:
        """The schema the chain declares after ``revision`` (default: the head), by name."""
        upto = self.index_of(revision) if revision is not None else len(self.revisions) - 1
        state: dict[str, SchemaDefinition] = {}
        for item in self.revisions[: upto + 1]:
            for step in item.steps:
                if isinstance(step, CreateStep):
                    state[step.definition.name] = step.definition
                else:
                    state.pop(step.definition.name, None)
        return state

    @classmethod
    def from_revisions(cls, revisions: Sequence[Revision], source: str = "") -> Chain:
        by_id: dict[str, Revision] = {}
        children: dict[str | None, list[str]] = {}
        for item in revisions:
            if item.revision in by_id:
                raise MigrationError("broken-chain", f"revision {item.revision!r} appears twice in {source}")
            by_id[item.revision] = item
            children.setdefault(item.down_revision, []).append(item.revision)
        for parent, kids in children.items():
            if len(kids) > 1:
                raise MigrationError(
                    "branched-chain",
                    f"revisions {sorted(kids)} all claim predecessor {parent!r}; a chain is linear: "
                    "rebase one onto the other",
                )
            if parent is not None and parent not in by_id:
                raise MigrationError("broken-chain", f"revision {kids[0]!r} names missing predecessor {parent!r}")
        ordered: list[Revision] = []
        current: str | None = None
        while current in children:
            (next_id,) = children[current]
            ordered.append(by_id[next_id])
            current = next_id
        if by_id and len(ordered) != len(by_id):
            raise MigrationError("broken-chain", f"the revisions in {source} do not form one chain from a root")
        return cls(tuple(ordered), source)

    @classmethod
    def load(cls, directory: Path | None = None) -> Chain:
        """Load ``directory`` (default: the toolkit's own chain shipped in the package)."""
        if directory is None:
            package = resources.files("graphrag_orm.migrations")
            found = [
                Revision.from_file(Path(entry.name), entry.read_text(encoding="utf-8"))
                for entry in package.iterdir()
                if entry.name.endswith(".json")
            ]
            return cls.from_revisions(found, "graphrag_orm.migrations")
        if not directory.is_dir():
            raise MigrationError("broken-chain", f"{directory} is not a folder of revisions")
        found = [
            Revision.from_file(path, path.read_text(encoding="utf-8")) for path in sorted(directory.glob("*.json"))
        ]
        return cls.from_revisions(found, str(directory))


class RevisionState(StrEnum):
    APPLIED = "applied"
    PENDING = "pending"
    CHECKSUM_MISMATCH = "checksum-mismatch"
    UNKNOWN = "unknown"


class RevisionStatus(Value):
    revision: str
    message: str
    state: RevisionState
    applied_at: str | None = None


class MigrationStatus(Value):
    """Where the database is on the chain; read only."""

    database_head: str | None
    chain_head: str | None
    revisions: tuple[RevisionStatus, ...]

    @property
    def up_to_date(self) -> bool:
        return self.database_head == self.chain_head and all(r.state == RevisionState.APPLIED for r in self.revisions)


class PlannedRevision(Value):
    revision: str
    message: str
    cypher: tuple[str, ...]


class MigrationPlan(Value):
    """What ``apply`` (or ``downgrade``) would run: exact Cypher, nothing executed."""

    direction: str
    revisions: tuple[PlannedRevision, ...]


class ApplyReport(Value):
    applied: tuple[str, ...] = ()
    statements: int = 0
    waited_seconds: float = 0.0
    direction: str = "upgrade"


class SchemaDifference(Value):
    name: str
    expected: str | None = None
    actual: str | None = None


class SchemaCheck(Value):
    """Expected schema against the live database: missing, different, unexpected, not online."""

    missing: tuple[SchemaDifference, ...] = ()
    different: tuple[SchemaDifference, ...] = ()
    unexpected: tuple[SchemaDifference, ...] = ()
    not_online: tuple[SchemaDifference, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.missing or self.different or self.unexpected or self.not_online)


def describe(definition: SchemaDefinition) -> str:
    kind, labels, props = definition.signature()
    return f"{kind} on {'|'.join(labels)}({', '.join(props)}){''.join(_detail_text(_detail(definition)))}"


def _detail_text(detail: dict[str, Any]) -> list[str]:
    return [f" {k}={v}" for k, v in sorted(detail.items())]


def _detail(definition: SchemaDefinition) -> dict[str, Any]:
    if isinstance(definition, VectorIndex):
        return {"dimensions": definition.dimensions, "similarity": definition.similarity.value}
    if isinstance(definition, FullTextIndex):
        return {"analyzer": definition.analyzer.value}
    return {}


def _matches(expected: SchemaDefinition, actual: LiveDefinition) -> bool:
    return expected.signature() == actual.signature and _detail(expected) == actual.detail


async def check_schema(
    store: Store, expected: Sequence[SchemaDefinition], *, prefix: str | None = None
) -> SchemaCheck:
    """Compare ``expected`` with the live schema; changes nothing.

    ``unexpected`` lists live definitions whose names start with ``prefix`` (the
    toolkit's own namespace) that are not expected; others belong to the application.
    """
    live = await read_live_schema(store)
    missing: list[SchemaDifference] = []
    different: list[SchemaDifference] = []
    not_online: list[SchemaDifference] = []
    wanted = {d.name: d for d in expected}
    for name, definition in wanted.items():
        actual = live.get(name)
        if actual is None:
            missing.append(SchemaDifference(name=name, expected=describe(definition)))
        elif not _matches(definition, actual):
            different.append(SchemaDifference(name=name, expected=describe(definition), actual=actual.describe()))
        elif actual.state != "ONLINE":
            not_online.append(SchemaDifference(name=name, expected="ONLINE", actual=actual.state))
    unexpected = [
        SchemaDifference(name=name, actual=actual.describe())
        for name, actual in sorted(live.items())
        if prefix and name.startswith(prefix + "_") and name not in wanted and name != JOURNAL_CONSTRAINT
    ]
    return SchemaCheck(
        missing=tuple(missing),
        different=tuple(different),
        unexpected=tuple(unexpected),
        not_online=tuple(not_online),
    )


@dataclass(frozen=True)
class AppliedRevision:
    revision: str
    down_revision: str | None
    checksum: str
    applied_at: str


class Migrator:
    """Applies a chain to the connected database (neomodel's ``adb``)."""

    def __init__(self, chain: Chain, *, index_timeout_seconds: float = DEFAULT_INDEX_TIMEOUT_SECONDS) -> None:
        if not 1.0 <= index_timeout_seconds <= MAX_INDEX_TIMEOUT_SECONDS:
            raise MigrationError("invalid-option", f"index_timeout_seconds must be 1..{MAX_INDEX_TIMEOUT_SECONDS:.0f}")
        self.chain = chain
        self.index_timeout_seconds = index_timeout_seconds

    async def journal(self) -> list[AppliedRevision]:
        """Applied revisions, root first, following each one's predecessor."""
        rows, _ = await adb.cypher_query(
            f"MATCH (m:{JOURNAL_LABEL}) RETURN m.revision, m.downRevision, m.checksum, toString(m.appliedAt)"
        )
        entries = {row[0]: AppliedRevision(row[0], row[1], row[2], row[3]) for row in rows}
        children: dict[str | None, list[AppliedRevision]] = {}
        for entry in entries.values():
            children.setdefault(entry.down_revision, []).append(entry)
        ordered: list[AppliedRevision] = []
        current: str | None = None
        while current in children:
            kids = children[current]
            if len(kids) != 1:
                raise MigrationError("broken-chain", f"the journal holds several revisions after {current!r}: {kids}")
            ordered.append(kids[0])
            current = kids[0].revision
        if len(ordered) != len(entries):
            raise MigrationError("broken-chain", "the journal's revisions do not form one chain")
        return ordered

    async def status(self) -> MigrationStatus:
        journal = await self.journal()
        applied = {entry.revision: entry for entry in journal}
        states: list[RevisionStatus] = []
        for item in self.chain.revisions:
            entry = applied.pop(item.revision, None)
            if entry is None:
                state = RevisionState.PENDING
            elif entry.checksum != item.checksum:
                state = RevisionState.CHECKSUM_MISMATCH
            else:
                state = RevisionState.APPLIED
            states.append(
                RevisionStatus(
                    revision=item.revision,
                    message=item.message,
                    state=state,
                    applied_at=entry.applied_at if entry else None,
                )
            )
        for entry in applied.values():
            states.append(
                RevisionStatus(
                    revision=entry.revision,
                    message="(not in this chain)",
                    state=RevisionState.UNKNOWN,
                    applied_at=entry.applied_at,
                )
            )
        return MigrationStatus(
            database_head=journal[-1].revision if journal else None,
            chain_head=self.chain.head,
            revisions=tuple(states),
        )

    async def _verified_position(self) -> int:
        """Index of the database head in the chain, after checking every applied checksum."""
        journal = await self.journal()
        for position, entry in enumerate(journal):
            if position >= len(self.chain.revisions) or self.chain.revisions[position].revision != entry.revision:
                raise MigrationError(
                    "unknown-revision" if self.chain.get(entry.revision) is None else "predecessor-not-head",
                    f"the database's journal has {entry.revision!r} where the chain {self.chain.source} has "
                    f"{self.chain.revisions[position].revision if position < len(self.chain.revisions) else 'nothing'!r}",
                )
            expected = self.chain.revisions[position].checksum
            if entry.checksum != expected:
                raise MigrationError(
                    "checksum-mismatch",
                    f"revision {entry.revision!r} was applied with checksum {entry.checksum} but its file now has "
                    f"{expected}; an applied revision must not change: restore it and add a new revision",
                )
        return len(journal) - 1

    async def plan(self, target: str | None = None) -> MigrationPlan:
        """Pending revisions up to ``target`` (default: the head) with their exact Cypher."""
        position = await self._verified_position()
        end = self.chain.index_of(target) if target else len(self.chain.revisions) - 1
        pending = self.chain.revisions[position + 1 : end + 1]
        return MigrationPlan(
            direction="upgrade",
            revisions=tuple(
                PlannedRevision(revision=r.revision, message=r.message, cypher=tuple(r.cypher())) for r in pending
            ),
        )

    async def downgrade_plan(self, target: str) -> MigrationPlan:
        """What ``downgrade(target)`` would run (``target`` ``"base"`` removes everything)."""
        position = await self._verified_position()
        end = -1 if target == "base" else self.chain.index_of(target)
        undone = list(reversed(self.chain.revisions[end + 1 : position + 1]))
        return MigrationPlan(
            direction="downgrade",
            revisions=tuple(
                PlannedRevision(
                    revision=r.revision,
                    message=r.message,
                    cypher=tuple(step.inverse().cypher() for step in reversed(r.steps)),
                )
                for r in undone
            ),
        )

    async def apply(self, target: str | None = None) -> ApplyReport:
        """Apply pending revisions in order, waiting until every index is ONLINE; record each."""
        await self._ensure_journal()
        position = await self._verified_position()
        end = self.chain.index_of(target) if target else len(self.chain.revisions) - 1
        applied: list[str] = []
        statements = 0
        waited = 0.0
        for item in self.chain.revisions[position + 1 : end + 1]:
            journal = await self.journal()
            head_id = journal[-1].revision if journal else None
            if item.down_revision != head_id:
                raise MigrationError(
                    "predecessor-not-head",
                    f"revision {item.revision!r} follows {item.down_revision!r}, but the database head is {head_id!r}",
                )
            await self._refuse_conflicts(item.steps)
            created: list[str] = []
            for step in item.steps:
                await adb.cypher_query(step.cypher())
                statements += 1
                if isinstance(step, CreateStep) and not step.definition.is_constraint:
                    created.append(step.definition.name)
            waited += await self._await_online(created)
            await adb.cypher_query(
                f"CREATE (m:{JOURNAL_LABEL} {{revision: $revision, downRevision: $down, checksum: $checksum, "
                "message: $message, steps: $steps, appliedAt: datetime()})",
                {
                    "revision": item.revision,
                    "down": item.down_revision,
                    "checksum": item.checksum,
                    "message": item.message,
                    "steps": len(item.steps),
                },
            )
            applied.append(item.revision)
        return ApplyReport(applied=tuple(applied), statements=statements, waited_seconds=round(waited, 3))

    async def downgrade(self, target: str) -> ApplyReport:
        """Undo revisions after ``target`` (``"base"``: all), last first, with their inverse steps."""
        plan = await self.downgrade_plan(target)
        statements = 0
        waited = 0.0
        undone: list[str] = []
        for planned in plan.revisions:
            item = self.chain.get(planned.revision)
            assert item is not None
            recreated: list[str] = []
            for step in reversed(item.steps):
                inverse = step.inverse()
                await adb.cypher_query(inverse.cypher())
                statements += 1
                if isinstance(inverse, CreateStep) and not inverse.definition.is_constraint:
                    recreated.append(inverse.definition.name)
            waited += await self._await_online(recreated)
            await adb.cypher_query(
                f"MATCH (m:{JOURNAL_LABEL} {{revision: $revision}}) DELETE m", {"revision": item.revision}
            )
            undone.append(item.revision)
        return ApplyReport(
            applied=tuple(undone),
            statements=statements,
            waited_seconds=round(waited, 3),
            direction="downgrade",
        )

    async def check(self, *, prefix: str | None = "graphrag") -> SchemaCheck:
        """The chain head's declared schema against the live database; changes nothing."""
        return await check_schema(list(self.chain.definitions_at().values()), prefix=prefix)

    async def _ensure_journal(self) -> None:
        await adb.cypher_query(
            f"CREATE CONSTRAINT {JOURNAL_CONSTRAINT} IF NOT EXISTS FOR (m:{JOURNAL_LABEL}) REQUIRE m.revision IS UNIQUE"
        )

    async def _refuse_conflicts(self, steps: Sequence[MigrationStep]) -> None:
        """Check the steps in order against the live schema as earlier steps leave it."""
        live = await read_live_schema(store)
        for step in steps:
            wanted = step.definition
            if isinstance(step, DropStep):
                live.pop(wanted.name, None)
                continue
            same_name = live.get(wanted.name)
            if same_name is not None:
                if not _matches(wanted, same_name):
                    raise MigrationError(
                        "schema-conflict",
                        f"{wanted.name} exists as {same_name.describe()} but the revision declares "
                        f"{describe(wanted)}; drop or rename it in a reviewed revision first",
                    )
                continue
            for other in live.values():
                if other.signature == wanted.signature():
                    raise MigrationError(
                        "equivalent-schema",
                        f"{wanted.name} ({describe(wanted)}) has an equivalent under another name, "
                        f"{other.name} ({other.describe()}); stopping for review: rename one of them, or adopt "
                        "the existing name in your layout",
                    )
            live[wanted.name] = LiveDefinition(wanted.name, wanted.signature(), "ONLINE", _detail(wanted))

    async def _await_online(self, names: Sequence[str]) -> float:
        if not names:
            return 0.0
        began = time.monotonic()
        deadline = began + self.index_timeout_seconds
        while True:
            rows, _ = await adb.cypher_query(
                "SHOW INDEXES YIELD name, state, populationPercent WHERE name IN $names "
                "RETURN name, state, populationPercent",
                {"names": list(names)},
            )
            states = {row[0]: (row[1], row[2]) for row in rows}
            failed = [name for name, (state, _) in states.items() if state == "FAILED"]
            if failed:
                raise MigrationError("index-not-online", f"indexes failed to populate: {failed}")
            if len(states) == len(names) and all(state == "ONLINE" for state, _ in states.values()):
                return time.monotonic() - began
            if time.monotonic() > deadline:
                detail = ", ".join(f"{n}: {s} {p:.0f}%" for n, (s, p) in sorted(states.items()))
                raise MigrationError(
                    "index-not-online",
                    f"indexes were not ONLINE within {self.index_timeout_seconds:.0f} s ({detail}); "
                    "the revision was not recorded; run apply again to keep waiting",
                )
            await asyncio.sleep(0.2)


def initial_revision(
    layout: Layout,
    embedding_set: EmbeddingSet,
    ontology: SchemaContributor | None = None,
    *,
    revision: str = "0001_graphrag_schema",
    message: str | None = None,
) -> Revision:
    """The first revision of an application's chain, from :meth:`Schema.create_steps`."""
    return Revision.new(
        revision,
        None,
        message or f"graphrag-orm schema for embedding set {embedding_set.id}",
        Schema.create_steps(layout, embedding_set, ontology),
    )


def next_revision(
    chain: Chain,
    layout: Layout,
    embedding_set: EmbeddingSet,
    ontology: SchemaContributor | None = None,
    *,
    revision: str,
    message: str,
) -> Revision | None:
    """A revision that takes the chain's head schema to what the toolkit now declares, or None.

    Like autogenerate, it compares declared with recorded and writes steps for a person
    to review: drops first (of removed or changed definitions), then creations.
    """
    current = chain.definitions_at() if chain.revisions else {}
    declared = {d.name: d for d in Schema.definitions(layout, embedding_set, ontology)}
    drops: list[MigrationStep] = [
        DropStep(definition=d) for name, d in sorted(current.items()) if declared.get(name) != d
    ]
    creates: list[MigrationStep] = [
        CreateStep(definition=d)
        for name, d in sorted(declared.items(), key=lambda kv: (not kv[1].is_constraint, kv[0]))
        if current.get(name) != d
    ]
    if not drops and not creates:
        return None
    return Revision.new(revision, chain.head, message, [*drops, *creates])


def write_revision(directory: Path, revision: Revision) -> Path:
    """Write ``revision`` as ``<id>.json`` in ``directory``; refuses to overwrite a file."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{revision.revision}.json"
    if path.exists():
        raise MigrationError("revision-exists", f"{path} exists; revisions are never overwritten")
    path.write_text(revision.to_file_json(), encoding="utf-8")
    return path


__all__ = [
    "ApplyReport",
    "Chain",
    "FullTextAnalyzer",
    "FullTextIndex",
    "MigrationPlan",
    "MigrationStatus",
    "Migrator",
    "RangeIndex",
    "Revision",
    "RevisionState",
    "SchemaCheck",
    "Similarity",
    "UniqueConstraint",
    "VectorIndex",
    "check_schema",
    "checksum_of",
    "initial_revision",
    "next_revision",
    "read_live_schema",
    "write_revision",
]
