"""The chain: revisions in one line from a root, and the one walk that orders them.

:func:`linear_walk` is the only code that turns "each item names its predecessor" into
an order; the chain of revision files and the database's journal both go through it,
so they refuse the same shapes with the same codes: ``broken-chain`` (an id twice, a
predecessor that does not exist, no single root) and ``branched-chain`` (two items
claim one predecessor). A :class:`Chain` is pure: it reads files, never the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import MigrationError
from graphrag_orm.migrate.revisions import MAX_CHAIN_REVISIONS, Revision, read_revisions
from graphrag_orm.schema import CreateStep, SchemaDefinition

__all__ = ["BASE", "TENANCY_FOLDER", "Chain", "linear_walk"]

T = TypeVar("T")

#: The target before the first revision (``downgrade("base")`` undoes everything).
BASE = "base"
#: The sub-folder of a chain's folder holding the revisions only a tenanted layout applies.
TENANCY_FOLDER = "tenancy"


def linear_walk(
    items: Sequence[T], *, key: Callable[[T], str], parent: Callable[[T], str | None], source: str
) -> list[T]:
    """``items`` root first, each after the one it names as ``parent``; refuses anything but one line.

    ``source`` says where the items came from, for the refusal's message.
    """
    by_id: dict[str, T] = {}
    children: dict[str | None, list[str]] = {}
    for item in items:
        if key(item) in by_id:
            raise MigrationError(ErrorCode.BROKEN_CHAIN, f"revision {key(item)!r} appears twice in {source}")
        by_id[key(item)] = item
        children.setdefault(parent(item), []).append(key(item))
    for predecessor, kids in children.items():
        if len(kids) > 1:
            raise MigrationError(
                ErrorCode.BRANCHED_CHAIN,
                f"revisions {sorted(kids)} in {source} all claim predecessor {predecessor!r}; a chain is linear: "
                "rebase one onto the other",
            )
        if predecessor is not None and predecessor not in by_id:
            raise MigrationError(
                ErrorCode.BROKEN_CHAIN, f"revision {kids[0]!r} in {source} names missing predecessor {predecessor!r}"
            )
    ordered: list[T] = []
    current: str | None = None
    while current in children:
        (current,) = children[current]
        ordered.append(by_id[current])
    if len(ordered) != len(by_id):
        raise MigrationError(ErrorCode.BROKEN_CHAIN, f"the revisions in {source} do not form one chain from a root")
    return ordered


@dataclass(frozen=True)
class Chain:
    """A linear chain of revisions, root first. Building one validates it."""

    revisions: tuple[Revision, ...]
    source: str = ""

    @property
    def head(self) -> str | None:
        return self.revisions[-1].revision if self.revisions else None

    def get(self, revision: str) -> Revision | None:
        return next((item for item in self.revisions if item.revision == revision), None)

    def index_of(self, revision: str | None) -> int:
        """Position of ``revision`` (-1 for None, the empty base); ``unknown-revision`` if absent."""
        if revision is None:
            return -1
        for position, candidate in enumerate(self.revisions):
            if candidate.revision == revision:
                return position
        raise MigrationError(ErrorCode.UNKNOWN_REVISION, f"revision {revision!r} is not in the chain {self.source}")

    def upgrade_path(self, position: int, target: str | None = None) -> tuple[Revision, ...]:
        """The revisions after ``position`` up to ``target`` (default: the head), in order."""
        end = self.index_of(target) if target else len(self.revisions) - 1
        return self.revisions[position + 1 : end + 1]

    def downgrade_path(self, position: int, target: str) -> tuple[Revision, ...]:
        """The revisions after ``target`` (``"base"``: all) up to ``position``, last first."""
        end = -1 if target == BASE else self.index_of(target)
        return tuple(reversed(self.revisions[end + 1 : position + 1]))

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
        """Order ``revisions`` into a chain; more than ``MAX_CHAIN_REVISIONS`` is ``chain-too-long``."""
        if len(revisions) > MAX_CHAIN_REVISIONS:
            raise MigrationError(
                ErrorCode.CHAIN_TOO_LONG,
                f"{source or 'the chain'} has {len(revisions):,} revisions, over the {MAX_CHAIN_REVISIONS:,} a chain may have",
            )
        ordered = linear_walk(
            revisions, key=lambda item: item.revision, parent=lambda item: item.down_revision, source=source
        )
        return cls(tuple(ordered), source)

    @classmethod
    def load(cls, directory: Path | None = None, *, tenanted: bool = False) -> Chain:
        """Load ``directory`` (default: the toolkit's own chain shipped in the package).

        Every file is checked whole before the chain is built, and before any checksum is
        trusted: see :mod:`graphrag_orm.migrate.revisions` for what is refused and with which code.
        With ``tenanted``, the revisions of its :data:`TENANCY_FOLDER` follow (the toolkit's
        own: the schema of a tenanted layout, docs/tenancy.md); an untenanted graph never
        reads them.
        """
        revisions, source = read_revisions(directory)
        if tenanted:
            tenancy, where = read_revisions(
                directory / TENANCY_FOLDER if directory is not None else None, TENANCY_FOLDER
            )
            revisions, source = [*revisions, *tenancy], f"{source} + {where}"
        return cls.from_revisions(revisions, source)
