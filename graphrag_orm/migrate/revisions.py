"""Revision files: the :class:`Revision` value, its checksum, and reading a folder of them.

A revision is one JSON file (``graphrag-orm-migration/1``) naming its own id
(``revision``), its predecessor (``down_revision``), a message, the reviewed steps and
a checksum of id, predecessor and steps. Reading never trusts a file: anything that is
not a readable UTF-8 JSON revision of this format is ``MigrationError("invalid-revision")``
naming the file, and a file whose steps do not match its checksum is
``MigrationError("unreviewed-edit")``. Nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from pydantic import TypeAdapter

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import MigrationError
from graphrag_orm.schema import MigrationStep
from graphrag_orm.values import Value

__all__ = [
    "FORMAT",
    "TOOLKIT_REVISIONS",
    "Revision",
    "checksum_of",
    "read_revision_file",
    "read_revisions",
]

FORMAT = "graphrag-orm-migration/1"
#: The package holding the toolkit's own chain (the repository's ``migrations/``).
TOOLKIT_REVISIONS = "graphrag_orm.migrations"
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

    def inverse_steps(self) -> list[MigrationStep]:
        """The steps that undo this revision: each step's inverse, last first."""
        return [step.inverse() for step in reversed(self.steps)]

    def to_file_json(self) -> str:
        """The revision file's text (what :func:`read_revision_file` reads back)."""
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
        """A revision with its checksum computed; an id outside ``[0-9A-Za-z][0-9A-Za-z_.-]*`` is refused."""
        if not _REVISION_ID.fullmatch(revision):
            raise MigrationError(
                ErrorCode.INVALID_REVISION, f"revision id {revision!r} must match {_REVISION_ID.pattern}"
            )
        return cls(
            revision=revision,
            down_revision=down_revision,
            message=message,
            steps=tuple(steps),
            checksum=checksum_of(revision, down_revision, steps),
        )

    @classmethod
    def from_file(cls, path: Path, text: str) -> Revision:
        """Parse a revision file's ``text`` (``path`` names it in refusals); checks its checksum."""
        try:
            body = json.loads(text)
        except json.JSONDecodeError as error:
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{path.name}: not JSON ({error})") from None
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{path.name}: not a {FORMAT} file")
        try:
            revision = cls(
                revision=body["revision"],
                down_revision=body.get("down_revision"),
                message=body.get("message", ""),
                steps=_STEPS.validate_python(body["steps"]),
                checksum=body["checksum"],
            )
        except (KeyError, TypeError, ValueError) as error:
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{path.name}: {error}") from None
        if revision.checksum != revision.computed_checksum:
            raise MigrationError(
                ErrorCode.UNREVIEWED_EDIT,
                f"{path.name}: its steps changed but its checksum did not ({revision.checksum} recorded, "
                f"{revision.computed_checksum} computed); review the change and record the new checksum, "
                "or add a new revision instead of editing this one",
            )
        return revision


def read_revision_file(entry: Path | Traversable) -> Revision:
    """One revision file; unreadable or non-UTF-8 bytes are ``invalid-revision``, never a traceback."""
    try:
        text = entry.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise MigrationError(
            ErrorCode.INVALID_REVISION, f"{entry.name}: not UTF-8 (byte {error.start}); a revision file is UTF-8 JSON"
        ) from None
    except OSError as error:
        raise MigrationError(
            ErrorCode.INVALID_REVISION, f"{entry.name}: cannot be read ({type(error).__name__})"
        ) from None
    return Revision.from_file(Path(entry.name), text)


def _json_files(entries: Iterable[Path | Traversable]) -> list[Path | Traversable]:
    return sorted((entry for entry in entries if entry.name.endswith(".json")), key=lambda entry: entry.name)


def read_revisions(directory: Path | None = None) -> tuple[list[Revision], str]:
    """Every ``*.json`` revision in ``directory`` (default: the toolkit's own), and where they came from.

    A missing folder is ``MigrationError("broken-chain")``; a bad file is refused as
    :func:`read_revision_file` says. The order is by file name; the chain orders them.
    """
    if directory is None:
        return [read_revision_file(entry) for entry in _json_files(resources.files(TOOLKIT_REVISIONS).iterdir())], (
            TOOLKIT_REVISIONS
        )
    if not directory.is_dir():
        raise MigrationError(ErrorCode.BROKEN_CHAIN, f"{directory} is not a folder of revisions")
    try:
        entries = list(directory.iterdir())
    except OSError as error:
        raise MigrationError(
            ErrorCode.INVALID_REVISION, f"{directory}: cannot be listed ({type(error).__name__})"
        ) from None
    return [read_revision_file(entry) for entry in _json_files(entries)], str(directory)
