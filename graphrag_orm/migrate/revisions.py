"""Revision files: the :class:`Revision` value, its checksum, and reading a folder of them.

A revision is one JSON file (``graphrag-orm-migration/1``) naming its own id
(``revision``), its predecessor (``down_revision``), a message, the reviewed steps and
a checksum of id, predecessor and steps. Reading never trusts a file, and checks all of
it before it compares the checksum (an author can compute a checksum for anything):

- ``invalid-revision``: not a regular file in the folder (a folder, a link out of it),
  not readable UTF-8 JSON of this format, a key the format does not have, an id or
  predecessor outside the id rule (``[0-9A-Za-z][0-9A-Za-z_.-]*``, at most 100: no path
  separator, no ``..`` at the start), a file name that is not ``<id>.json``, a message
  with control characters or over :data:`MAX_REVISION_MESSAGE_CHARS`, a checksum that is
  not ``sha256:<64 hex>``, or a step whose names, labels, types, properties or options
  are not what :mod:`graphrag_orm.schema` can place in Cypher;
- ``revision-too-large``: a file over :data:`MAX_REVISION_FILE_BYTES`, or more than
  :data:`MAX_REVISION_STEPS` steps (counted before any step is parsed);
- ``chain-too-long``: a folder of more than :data:`MAX_CHAIN_REVISIONS` revision files
  (counted before any is read);
- ``unreviewed-edit``: a well-formed file whose steps do not match its checksum.

Nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import GraphRagError, MigrationError
from graphrag_orm.schema import MigrationStep
from graphrag_orm.values import Value

__all__ = [
    "FORMAT",
    "MAX_CHAIN_REVISIONS",
    "MAX_REVISION_FILE_BYTES",
    "MAX_REVISION_MESSAGE_CHARS",
    "MAX_REVISION_STEPS",
    "TOOLKIT_REVISIONS",
    "Revision",
    "checksum_of",
    "read_revision_file",
    "read_revisions",
]

FORMAT = "graphrag-orm-migration/1"
#: The package holding the toolkit's own chain (the repository's ``migrations/``).
TOOLKIT_REVISIONS = "graphrag_orm.migrations"
#: Steps in one revision; more is ``revision-too-large``, before any step is parsed or run.
MAX_REVISION_STEPS = 500
#: Bytes of one revision file; a larger file is ``revision-too-large`` and not parsed.
MAX_REVISION_FILE_BYTES = 1_048_576
#: Characters of a revision's message.
MAX_REVISION_MESSAGE_CHARS = 1_000
#: Revision files in one chain's folder; more is ``chain-too-long``, before any is read.
MAX_CHAIN_REVISIONS = 1_000

_REVISION_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.-]{0,99}")
_CHECKSUM = re.compile(r"sha256:[0-9a-f]{64}")
_KEYS = frozenset({"format", "revision", "down_revision", "message", "checksum", "steps"})
# Right-to-left and isolate overrides: they make a message read differently from what it holds.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_STEPS = TypeAdapter(tuple[MigrationStep, ...])


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _revision_id_problem(value: object, what: str) -> str | None:
    """Why ``value`` is not a revision id, or None."""
    if isinstance(value, str) and _REVISION_ID.fullmatch(value):
        return None
    return f"{what} {_shown(value)} must match {_REVISION_ID.pattern} (no path separator, no leading '.')"


def _message_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return f"message must be a string, not {type(value).__name__}"
    if len(value) > MAX_REVISION_MESSAGE_CHARS:
        return f"message is over {MAX_REVISION_MESSAGE_CHARS:,} characters"
    if any(unicodedata.category(c) == "Cc" or c in _BIDI_CONTROLS for c in value):
        return "message holds control characters (one line of text)"
    return None


def _too_many_steps(count: int, where: str) -> MigrationError:
    return MigrationError(
        ErrorCode.REVISION_TOO_LARGE,
        f"{where}: {count:,} steps, over the {MAX_REVISION_STEPS:,} a revision may hold; split it into several revisions",
    )


def _step_problems(error: ValidationError) -> str:
    """A pydantic error on the steps as one line: each problem's place and reason."""
    problems = []
    for item in error.errors()[:3]:
        # The step's number, its action and kind, then the field: ``step 1 create unique-constraint name``.
        number, *rest = item["loc"]
        place = " ".join(
            [
                f"step {int(number) + 1}" if isinstance(number, int) else str(number),
                *(str(part) for part in rest if part != "definition"),
            ]
        )
        cause = (item.get("ctx") or {}).get("error")
        reason = cause.message if isinstance(cause, GraphRagError) else item["msg"]
        problems.append(f"{place}: {reason}".replace("\n", " "))
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


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
    """One reviewed revision: its id, predecessor, message, steps and checksum.

    Building one checks every field (the id rule, the message, the checksum's form, at
    most :data:`MAX_REVISION_STEPS` steps, each step's names and options).
    """

    revision: str
    down_revision: str | None
    message: str
    steps: tuple[MigrationStep, ...] = Field(max_length=MAX_REVISION_STEPS)
    checksum: str

    @field_validator("revision", "down_revision")
    @classmethod
    def _revision_id(cls, value: str | None) -> str | None:
        problem = None if value is None else _revision_id_problem(value, "revision id")
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("message")
    @classmethod
    def _message(cls, value: str) -> str:
        problem = _message_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("checksum")
    @classmethod
    def _checksum(cls, value: str) -> str:
        if not _CHECKSUM.fullmatch(value):
            raise ValueError(f"checksum {_shown(value)} is not sha256:<64 lower-case hex digits>")
        return value

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
        """A revision with its checksum computed.

        An id or predecessor outside ``[0-9A-Za-z][0-9A-Za-z_.-]*`` or a message that is not
        one line of text is ``invalid-revision``; more than :data:`MAX_REVISION_STEPS` steps is
        ``revision-too-large``.
        """
        for problem in (
            _revision_id_problem(revision, "revision id"),
            None if down_revision is None else _revision_id_problem(down_revision, "down_revision"),
            _message_problem(message),
        ):
            if problem:
                raise MigrationError(ErrorCode.INVALID_REVISION, problem)
        if len(steps) > MAX_REVISION_STEPS:
            raise _too_many_steps(len(steps), revision)
        return cls(
            revision=revision,
            down_revision=down_revision,
            message=message,
            steps=tuple(steps),
            checksum=checksum_of(revision, down_revision, steps),
        )

    @classmethod
    def from_file(cls, path: Path, text: str) -> Revision:
        """Parse a revision file's ``text`` (``path`` names it in refusals); checks its checksum.

        Everything is checked before the checksum is compared (see the module's refusals);
        the file's name must be ``<revision id>.json``.
        """
        name = path.name
        try:
            body = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as error:
            reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: not JSON ({reason})") from None
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: not a {FORMAT} file")
        unknown = sorted(set(body) - _KEYS)
        if unknown:
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: keys {_shown(unknown)} are not part of {FORMAT}")
        missing = sorted(key for key in ("revision", "checksum", "steps") if key not in body)
        if missing:
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: no {', '.join(missing)}")
        revision_id, down_revision = body["revision"], body.get("down_revision")
        for problem in (
            _revision_id_problem(revision_id, "revision id"),
            None if down_revision is None else _revision_id_problem(down_revision, "down_revision"),
            _message_problem(body.get("message", "")),
        ):
            if problem:
                raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: {problem}")
        if name != f"{revision_id}.json":
            raise MigrationError(
                ErrorCode.INVALID_REVISION, f"{_shown(name)} holds revision {revision_id!r}; name it {revision_id}.json"
            )
        steps = body["steps"]
        if not isinstance(steps, list):
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: steps must be a list")
        if len(steps) > MAX_REVISION_STEPS:
            raise _too_many_steps(len(steps), name)
        try:
            parsed = _STEPS.validate_python(steps)
        except ValidationError as error:
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: {_step_problems(error)}") from None
        try:
            revision = cls(
                revision=revision_id,
                down_revision=down_revision,
                message=body.get("message", ""),
                steps=parsed,
                checksum=body["checksum"],
            )
        except ValidationError as error:
            first = error.errors()[0]
            place = ".".join(str(part) for part in first["loc"])
            raise MigrationError(ErrorCode.INVALID_REVISION, f"{name}: {place}: {first['msg']}") from None
        if revision.checksum != revision.computed_checksum:
            raise MigrationError(
                ErrorCode.UNREVIEWED_EDIT,
                f"{path.name}: its steps changed but its checksum did not ({revision.checksum} recorded, "
                f"{revision.computed_checksum} computed); review the change and record the new checksum, "
                "or add a new revision instead of editing this one",
            )
        return revision


def _check_entry(entry: Path, folder: Path) -> None:
    """A revision file is a regular file whose real path is inside its folder (never a folder, a
    device, a pipe that would block the read, or a link out of the folder)."""
    try:
        inside = entry.resolve(strict=True).is_relative_to(folder.resolve(strict=True))
        regular = entry.is_file()
    except (OSError, RuntimeError) as error:
        raise MigrationError(
            ErrorCode.INVALID_REVISION, f"{entry.name}: cannot be read ({type(error).__name__})"
        ) from None
    if not inside:
        raise MigrationError(ErrorCode.INVALID_REVISION, f"{entry.name}: links outside {folder}")
    if not regular:
        raise MigrationError(ErrorCode.INVALID_REVISION, f"{entry.name}: not a regular file")


def read_revision_file(entry: Path | Traversable) -> Revision:
    """One revision file; unreadable or non-UTF-8 bytes are ``invalid-revision``, never a traceback.

    At most :data:`MAX_REVISION_FILE_BYTES` are read: a larger file is ``revision-too-large``.
    A path is first checked to be a regular file inside its folder.
    """
    if isinstance(entry, Path):
        _check_entry(entry, entry.parent)
    try:
        with entry.open("rb") as file:
            data = file.read(MAX_REVISION_FILE_BYTES + 1)
    except OSError as error:
        raise MigrationError(
            ErrorCode.INVALID_REVISION, f"{entry.name}: cannot be read ({type(error).__name__})"
        ) from None
    if len(data) > MAX_REVISION_FILE_BYTES:
        raise MigrationError(
            ErrorCode.REVISION_TOO_LARGE,
            f"{entry.name}: over {MAX_REVISION_FILE_BYTES:,} bytes, more than a revision file may hold",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise MigrationError(
            ErrorCode.INVALID_REVISION, f"{entry.name}: not UTF-8 (byte {error.start}); a revision file is UTF-8 JSON"
        ) from None
    return Revision.from_file(Path(entry.name), text)


def _bounded(entries: list[Path | Traversable], source: str) -> list[Path | Traversable]:
    if len(entries) > MAX_CHAIN_REVISIONS:
        raise MigrationError(
            ErrorCode.CHAIN_TOO_LONG,
            f"{source} holds {len(entries):,} revision files, over the {MAX_CHAIN_REVISIONS:,} a chain may have",
        )
    return entries


def _json_files(entries: Iterable[Path | Traversable]) -> list[Path | Traversable]:
    return sorted((entry for entry in entries if entry.name.endswith(".json")), key=lambda entry: entry.name)


def read_revisions(directory: Path | None = None, package_folder: str | None = None) -> tuple[list[Revision], str]:
    """Every ``*.json`` revision in ``directory`` (default: the toolkit's own), and where they came from.

    A missing folder is ``MigrationError("broken-chain")``; more than
    :data:`MAX_CHAIN_REVISIONS` files is ``chain-too-long`` (before any is read); a bad file
    is refused as :func:`read_revision_file` says. The order is by file name; the chain
    orders them. ``package_folder`` reads a sub-folder of the toolkit's own (``directory`` None).
    """
    if directory is None:
        folder = resources.files(TOOLKIT_REVISIONS)
        where = TOOLKIT_REVISIONS
        if package_folder is not None:
            folder, where = folder.joinpath(package_folder), f"{TOOLKIT_REVISIONS}/{package_folder}"
        shipped = _bounded(_json_files(folder.iterdir()), where)
        return [read_revision_file(entry) for entry in shipped], where
    if not directory.is_dir():
        raise MigrationError(ErrorCode.BROKEN_CHAIN, f"{directory} is not a folder of revisions")
    try:
        entries = list(directory.iterdir())
    except OSError as error:
        raise MigrationError(
            ErrorCode.INVALID_REVISION, f"{directory}: cannot be listed ({type(error).__name__})"
        ) from None
    return [read_revision_file(entry) for entry in _bounded(_json_files(entries), str(directory))], str(directory)
