"""Every exception the toolkit raises on purpose, under one base with a stable ``code``.

Messages are for people (one line, never a secret, never stored text); codes are for
programs (members of :class:`~graphrag_orm.codes.ErrorCode`, or of
:class:`~graphrag_orm.codes.DocumentErrorCode` for a document's own failure)::

    GraphRagError
    ├── ConfigurationError (also ValueError)   invalid-option, invalid-layout, layout-collision,
    │   │                                      invalid-ontology, tokenizer-unavailable,
    │   │                                      local-model-missing
    │   └── ModelModeError                     unknown-model-mode, unknown-provider, model-setting-missing
    ├── DatabaseUnavailable                    database-unavailable, invalid-uri, database-not-found,
    │                                          auth-failed
    ├── StoreNotConnected                      not-connected
    ├── SchemaMismatch                         schema-missing, schema-mismatch, embedding-dimensions
    ├── MigrationError                         unreviewed-edit, checksum-mismatch, migration-in-progress, ...
    ├── LocalDbError                           localdb-not-found, port-in-use, start-timeout, ...
    ├── LoadError                              a DocumentErrorCode (invalid-utf8, pdf-no-text, ...)
    ├── DocumentFailure                        a DocumentErrorCode (internal to ingestion)
    ├── ChunkNotPlaced                         position-not-recovered (the text locator)
    ├── EmbeddingRejected                      embedding-count, embedding-dimensions, invalid-embedding
    ├── ModelCallFailed                        rate-limited, embedding-failed, extraction-failed,
    │                                          model-unreachable, ...
    ├── Unreadable                        unreadable-reply (internal to extraction)
    ├── QuestionRefused                        empty-question, question-too-long, invalid-question,
    │                                          route-not-available
    ├── RetrievalFailed                        retrieval-failed; a Cypher expansion: the sandbox's codes
    ├── ScopeError                             invalid-scope; a Cypher scope: the sandbox's codes
    ├── QueryRefused                           not-allowed, invalid-query, not-read-only, query-failed,
    │                                          query-timeout, too-deep, regex-not-allowed,
    │                                          range-too-large, vector-not-readable,
    │                                          unknown-name (a model's query)
    ├── ExportError                            invalid-export
    ├── GraphRefused                           foreign-graph
    ├── DocumentNotResolved                    document-not-found, ambiguous-id
    ├── FactUpdatesExceeded                    fact-updates-exceeded (internal to removal)
    ├── RemovalConflict                        concurrent-write
    ├── ScriptMissing                          no-scripted-reply
    ├── StandInUnsupported                     stand-in-unsupported
    ├── EvidenceBlockError                     no-evidence-block, no-question-block
    ├── RecordingMissing                       recording-missing
    ├── RecordingRefused                       secret-in-recording
    ├── CallBudgetExceeded                     call-budget-exceeded (record mode)
    ├── MergeError                             merge-blocked, merge-failed (entity resolution)
    ├── UndoRefused                            run-not-found, already-undone, written-since, ontology-changed
    ├── EvaluationError                        invalid-cases, invalid-report, missing-extra
    ├── FetchFailed                            fetch-failed (a sample's download)
    ├── AdoptionError                          adoption-blocked, run-not-found (adopt mode)
    └── ReembeddingError                       same-embedding-set, staging-property-in-use, ... (re-embedding)

``str(error)`` is ``"<message> [<code>]"``; ``error.code`` and ``error.message`` are
the parts.
"""

from __future__ import annotations

from graphrag_orm.codes import DocumentErrorCode, ErrorCode

__all__ = [
    "AdoptionError",
    "CallBudgetExceeded",
    "ChunkNotPlaced",
    "CommunityBuildSuperseded",
    "ConfigurationError",
    "DatabaseUnavailable",
    "DocumentFailure",
    "DocumentNotResolved",
    "EmbeddingRejected",
    "EvaluationError",
    "EvidenceBlockError",
    "ExportError",
    "FactUpdatesExceeded",
    "FetchFailed",
    "GraphRagError",
    "GraphRefused",
    "LoadError",
    "LocalDbError",
    "MergeError",
    "MigrationError",
    "ModelCallFailed",
    "ModelModeError",
    "QueryRefused",
    "QuestionRefused",
    "RecordingMissing",
    "RecordingRefused",
    "ReembeddingError",
    "RemovalConflict",
    "RetrievalFailed",
    "SchemaMismatch",
    "ScopeError",
    "ScriptMissing",
    "StandInUnsupported",
    "StoreNotConnected",
    "TenantError",
    "UndoRefused",
    "Unreadable",
]

Code = ErrorCode | DocumentErrorCode | str


class GraphRagError(Exception):
    """Base of every deliberate error; ``code`` is stable across releases."""

    code: str = "graphrag-error"

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"


class ConfigurationError(GraphRagError, ValueError):
    """An option, layout, ontology or embedding set outside its bounds (``invalid-option``, ...)."""


class DatabaseUnavailable(GraphRagError):
    """Neo4j could not be used with the connection settings: not reachable (``database-unavailable``),
    a ``NEO4J_URI`` that is not a Bolt URI (``invalid-uri``), no database of the ``NEO4J_DATABASE``
    name (``database-not-found``), or credentials refused (``auth-failed``). Messages never
    hold the password."""


class StoreNotConnected(GraphRagError):
    """A statement was sent before ``connect()`` gave the store a driver (``not-connected``)."""


class SchemaMismatch(GraphRagError):
    """The database schema differs from what the toolkit needs (``schema-missing``, ``schema-mismatch``, ...)."""


class MigrationError(GraphRagError):
    """A migration was refused; nothing was applied past the refusal."""


class LocalDbError(GraphRagError):
    """The local server could not be resolved, started or stopped (the code names which)."""


class LoadError(GraphRagError):
    """A source could not be loaded; ``code`` is a document error code."""


class DocumentFailure(GraphRagError):
    """One document's work failed with a document error code (internal to ingestion)."""


class ChunkNotPlaced(GraphRagError):
    """The text locator could not place a chunk in its document (``position-not-recovered``).

    ``index`` is the chunk's position in the list the producer gave; the message names it
    and why (longer than the document, out of order, not in the text), never the chunk's text.
    """

    def __init__(self, index: int, message: str) -> None:
        super().__init__(DocumentErrorCode.POSITION_NOT_RECOVERED, message)
        self.index = index


class EmbeddingRejected(GraphRagError):
    """An embedder's output was refused before the write.

    Codes: ``embedding-count`` (not one vector per text), ``embedding-dimensions``
    (a vector of the wrong length) and ``invalid-embedding`` (a coordinate that is
    not a finite number within float32 range, or an all-zero vector). Messages
    name the vector's position, never the text it came from.
    """


class ModelCallFailed(GraphRagError):
    """A model call failed for good: not transient, retries exhausted, or a hint too long to wait.

    ``code`` is ``rate-limited`` when the last failure was a 429, otherwise the
    code the caller passed (``embedding-failed``, ``extraction-failed``, ...).
    The original exception is chained as ``__cause__``; ``attempts`` counts the
    calls made and ``status`` is the last HTTP status, if there was one.
    """

    def __init__(self, code: Code, message: str, *, attempts: int, status: int | None) -> None:
        super().__init__(code, message)
        self.attempts = attempts
        self.status = status


class Unreadable(GraphRagError):
    """An extraction reply is not JSON for the schema; ``problem`` says what, briefly (no reply text)."""

    def __init__(self, problem: str) -> None:
        super().__init__(ErrorCode.UNREADABLE_REPLY, problem)
        self.problem = problem


class QuestionRefused(GraphRagError):
    """The question cannot be retrieved: ``empty-question``, ``question-too-long``,
    ``invalid-question`` (not valid Unicode text), ``route-not-available``."""


class RetrievalFailed(GraphRagError):
    """A route or a context query failed (``retrieval-failed``); no partial evidence is returned.

    A Cypher expansion the sandbox refused carries the sandbox's code instead
    (``not-allowed``, ``invalid-query``, ``not-read-only``, ``query-failed``,
    ``query-timeout``, ``too-deep``, ``regex-not-allowed``, ``range-too-large``,
    ``vector-not-readable``), with the :class:`QueryRefused` as ``__cause__``.
    """


class ScopeError(GraphRagError):
    """A scope that is not one (``invalid-scope``: a Cypher scope without a ``documentId`` column).

    A Cypher scope's query the sandbox refused carries the sandbox's code instead
    (``not-allowed``, ``invalid-query``, ``not-read-only``, ``query-failed``,
    ``query-timeout``, ``too-deep``, ``regex-not-allowed``, ``range-too-large``,
    ``vector-not-readable``), with the :class:`QueryRefused` as ``__cause__``.
    """


class TenantError(GraphRagError):
    """A tenancy refusal (:mod:`graphrag_orm.tenancy`): ``invalid-tenant``, ``tenant-required``,
    ``tenant-mismatch`` or ``tenant-refused``; raised before any statement goes out."""


class QueryRefused(GraphRagError):
    """Cypher a caller or a model supplied was refused by the sandbox (:mod:`graphrag_orm.store.sandbox`).

    ``not-allowed`` (the text gate, or a plan with a procedure call, LOAD CSV or a
    transaction operator), ``invalid-query`` (the server cannot plan it),
    ``not-read-only`` (its plan may write), ``query-failed`` (the server failed it
    while it ran: a lost connection, a division by zero), ``query-timeout`` (it ran past
    its timeout: the server's, or the sandbox's own deadline), and the text gate's
    ``too-deep``, ``regex-not-allowed``, ``range-too-large`` and ``vector-not-readable``;
    for a sandbox given ``known_names`` (Text2Cypher's), ``unknown-name`` (the query
    names a label, relationship type or property key the graph has never held).
    The message names the rule, the unknown names or the server's status code, never
    the query's values.
    """


class ExportError(GraphRagError):
    """An export document that cannot be read back as an answer (``invalid-export``)."""


class GraphRefused(GraphRagError):
    """Maintenance refused to touch nodes the toolkit did not write (``foreign-graph``)."""


class DocumentNotResolved(GraphRagError):
    """A document reference (an id, an id prefix, a source URI or a path) that names no stored
    document (``document-not-found``) or, as a prefix, several (``ambiguous-id``, the message
    says how many)."""


class FactUpdatesExceeded(GraphRagError):
    """A removal batch would update more facts than allowed; it was rolled back (internal)."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(ErrorCode.FACT_UPDATES_EXCEEDED, f"{count} fact updates, over {limit}")
        self.count = count
        self.limit = limit


class RemovalConflict(GraphRagError):
    """A removal batch kept meeting a concurrent writer (an ingest of new versions of its
    documents) and was rolled back each time (``concurrent-write``); nothing of it was removed."""


class CommunityBuildSuperseded(GraphRagError):
    """A build's staged communities were removed by a build started after it (``concurrent-write``):
    its switch changed nothing, and the later build's communities are the ones kept."""


class ScriptMissing(GraphRagError):
    """A scripted chat was asked something its script has no reply for (``no-scripted-reply``)."""


class StandInUnsupported(GraphRagError):
    """ExtractiveChat was asked something it cannot reply to validly (``stand-in-unsupported``)."""


class EvidenceBlockError(GraphRagError):
    """A prompt has no well-formed block of the kind asked for (``no-evidence-block``, ``no-question-block``)."""


class RecordingMissing(GraphRagError):
    """Replay met a request the recording has no entry for (``recording-missing``)."""


class RecordingRefused(GraphRagError):
    """An entry held the value of a secret environment variable and was not stored
    (``secret-in-recording``). The message names the variable, never its value."""


class MergeError(GraphRagError):
    """A merge plan not applied (``merge-blocked``: it has blockers, nothing was written) or a
    merge that failed (``merge-failed``: its transaction wrote nothing; the cause is chained).

    ``failed`` is the failed merge's suggestion (None for a blocked plan); ``applied_run_ids``
    are the runs of the merges applied before it, in plan order: undo them last first, or keep them.
    """

    def __init__(self, code: Code, message: str, *, failed: object = None, applied_run_ids: tuple[str, ...] = ()):
        super().__init__(code, message)
        self.failed = failed
        self.applied_run_ids = applied_run_ids


class UndoRefused(GraphRagError):
    """An undo refused with the graph unchanged: ``run-not-found`` (no merge run of that id),
    ``already-undone``, ``written-since`` (something the merge wrote or removed was written
    again) or ``ontology-changed`` (the run was recorded under another ontology)."""


# evaluation
class EvaluationError(GraphRagError):
    """Evaluation input that cannot be used: a cases file (``invalid-cases``, naming the line, never
    its text), a report to compare with (``invalid-report``), or the HTML report without its
    extra (``missing-extra``, naming the pip install)."""


class ModelModeError(ConfigurationError):
    """The environment names models that cannot be used: ``unknown-model-mode``, ``unknown-provider``,
    or ``model-setting-missing`` (the message prints the settings read, any key as ``***``)."""


class CallBudgetExceeded(GraphRagError):
    """Record mode spent ``GRAPHRAG_MAX_CALLS`` (``call-budget-exceeded``): the call over it was not sent."""


class FetchFailed(GraphRagError):
    """A sample asked to download its text could not (``fetch-failed``); the message names the site, not the error text."""


class AdoptionError(GraphRagError):
    """An adoption not done, the graph unchanged: ``adoption-blocked`` (the plan has blockers; its preview
    names them) or ``run-not-found`` (an undo of an id that names no adoption run)."""


class ReembeddingError(GraphRagError):
    """A re-embedding plan refused before anything was read or written: ``same-embedding-set``,
    ``staging-property-in-use``, ``vector-index-in-use``, or ``embedding-dimensions`` (an embedder
    whose vectors are not the new set's size)."""
