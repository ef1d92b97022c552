"""What a community build and a listing return."""

from __future__ import annotations

from typing import Final

from pydantic import Field

from graphrag_orm.citations import Citation
from graphrag_orm.codes import GlobalRefusal
from graphrag_orm.values import Limit, Value

__all__ = [
    "OFFLINE_WRITER",
    "CommunitiesBuilt",
    "CommunityFound",
    "CommunityListing",
    "CommunityStaleness",
    "FindingFound",
    "GlobalAnswer",
    "GlobalClaim",
    "ReportCitation",
    "ReportFound",
    "ReportListing",
    "ReportPreview",
    "ReportsWritten",
    "StaleCommunity",
]


class CommunitiesBuilt(Value):
    """One build: the communities written per level, the facts read, the limits reached.

    ``removed`` counts the communities replaced. ``communities`` counts those stored after
    it: ``communities_kept`` left as they were (a refresh's untouched subtrees; none after a
    build) and ``communities_added`` written by it; ``communities_replaced`` is ``removed``.
    A refresh (``CommunityService.refresh``) also counts the reports it kept
    (``reports_kept``) and those it removed because their inputs changed
    (``reports_removed``); a build removes every report. ``transactions`` counts the write
    transactions it took (a whole build stages, switches and retires in several).
    """

    build_id: str
    communities: int = 0
    per_level: tuple[int, ...] = ()
    things: int = 0
    facts_read: int = 0
    removed: int = 0
    communities_kept: int = 0
    communities_replaced: int = 0
    communities_added: int = 0
    reports_kept: int = 0
    reports_removed: int = 0
    transactions: int = 0
    seconds: float = 0.0
    limits_reached: tuple[Limit, ...] = ()


class CommunityFound(Value):
    id: str
    level: int
    size: int
    facts: int
    fingerprint: str
    parent_id: str | None = None


class CommunityListing(Value):
    communities: tuple[CommunityFound, ...] = ()
    limits_reached: tuple[Limit, ...] = ()


class StaleCommunity(Value):
    """A stored community the graph has changed under since its build, and why.

    ``fingerprint``: its members or the facts among them (type, ends, documents) are not
    what its stored fingerprint was computed from. ``unplaced``: things joined by a fact to
    a member that no community holds (written since the build).
    """

    id: str
    level: int
    fingerprint_changed: bool
    unplaced: int = 0


class CommunityStaleness(Value):
    """Which stored communities are stale, each compared with the graph as it is now.

    ``checked`` communities were read; ``stale`` counts every stale one; ``communities``
    lists them, coarsest level first, at most the limit asked for (``MaxListed`` past it).
    """

    checked: int = 0
    stale: int = 0
    communities: tuple[StaleCommunity, ...] = ()
    limits_reached: tuple[Limit, ...] = ()


class ReportCitation(Value):
    """Stored bytes a finding cites: the chunk, its document, the document byte span and the text there."""

    chunk_id: str
    document_id: str
    start_byte: int
    end_byte: int
    quote: str


class FindingFound(Value):
    """One stored finding: its text and its citations, each located byte-exact when it was written."""

    text: str
    citations: tuple[ReportCitation, ...]


class ReportFound(Value):
    """A stored report: its community, title, writer, findings, and the findings its writer had dropped.

    ``retracted`` and ``trimmed`` count findings a removal of documents has since deleted
    (every citation was of a removed document) or left with fewer citations.
    """

    id: str
    community_id: str
    level: int
    title: str
    writer: str
    fingerprint: str
    unsupported: int = 0
    retracted: int = 0
    trimmed: int = 0
    findings: tuple[FindingFound, ...] = ()


class ReportListing(Value):
    reports: tuple[ReportFound, ...] = ()
    limits_reached: tuple[Limit, ...] = ()


class ReportPreview(Value):
    """What a report run would cost, before any call: calls, estimated input tokens, the output bound.

    ``input_tokens`` is estimated at four UTF-8 bytes per token of each request;
    ``max_output_tokens`` is the most the replies may hold in all (calls times the bound).
    """

    writer: str
    communities: int = 0
    calls: int = 0
    input_tokens: int = 0
    max_output_tokens: int = 0
    limits_reached: tuple[Limit, ...] = ()


class ReportsWritten(Value):
    """One report run: reports and findings stored, what was dropped (by code), calls and tokens.

    ``dropped`` counts by :class:`~graphrag_orm.codes.ReportDrop` code: findings not
    verified (``unsupported-finding``), reports with no verified finding
    (``no-verified-finding``), model replies that were not a report (``unreadable-report``) and
    the finding a reply cut at the output limit was writing (``cut-finding``).
    ``without_facts`` counts communities with no fact among their members (no report, no call).
    """

    run_id: str
    writer: str
    reports: int = 0
    findings: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    without_facts: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    removed: int = 0
    seconds: float = 0.0
    limits_reached: tuple[Limit, ...] = ()


#: ``GlobalAnswer.writer`` of an offline answer (the word-overlap map and reduce, no model).
OFFLINE_WRITER: Final = "offline-word-overlap"


class GlobalClaim(Value):
    """One sentence of an answer and the located spans of the findings it rests on."""

    text: str
    citations: tuple[Citation, ...]


class GlobalAnswer(Value):
    """An answer from the reports: its text and verified chunk citations, or a refusal with its code.

    ``writer`` is the model that wrote it, or ``offline-word-overlap``. ``claims`` are its
    sentences, each with its citations (an offline answer's are its findings).
    ``findings_dropped`` counts findings left out because a citation no longer locates in
    the stored bytes; ``findings_invented`` counts finding ids a model cited that it was not
    shown; ``unreadable_replies`` the model's replies that were not the JSON asked for.
    ``calls`` and the tokens are the model's (0 offline).
    """

    question: str
    answer: str | None = None
    citations: tuple[Citation, ...] = ()
    claims: tuple[GlobalClaim, ...] = ()
    reports: tuple[str, ...] = ()
    refused: GlobalRefusal | None = None
    writer: str = OFFLINE_WRITER
    findings_shown: int = 0
    findings_dropped: int = 0
    findings_invented: int = 0
    unreadable_replies: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    limits_reached: tuple[Limit, ...] = ()
