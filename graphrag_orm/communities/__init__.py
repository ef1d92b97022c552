"""Communities of the knowledge graph: hierarchical, seeded detection, their stored nodes and their reports,
kept true as documents change (retraction on removal, staleness by fingerprint, refresh)."""

from graphrag_orm.communities.detection import (
    COMMUNITIES_EXTRA_MISSING,
    DetectedCommunity,
    Detection,
    GraphFact,
    detect,
)
from graphrag_orm.communities.global_answers import (
    GLOBAL_NOTE,
    OFFLINE_WRITER,
    GlobalAnswer,
    GlobalAnswers,
    GlobalClaim,
)
from graphrag_orm.communities.options import CommunityOptions, GlobalOptions, ReportOptions
from graphrag_orm.communities.reports import ReportService
from graphrag_orm.communities.service import CommunityService
from graphrag_orm.communities.values import (
    CommunitiesBuilt,
    CommunityFound,
    CommunityListing,
    CommunityStaleness,
    FindingFound,
    ReportCitation,
    ReportFound,
    ReportListing,
    ReportPreview,
    ReportsWritten,
    StaleCommunity,
)
from graphrag_orm.communities.writers import (
    EXTRACTIVE_WRITER,
    ChatReportWriter,
    DraftFinding,
    ExtractiveReportWriter,
    ReportDraft,
    ReportInput,
    ReportWriter,
)
from graphrag_orm.models import Community, CommunityReport, InCommunity, ReportFinding

__all__ = [
    "COMMUNITIES_EXTRA_MISSING",
    "EXTRACTIVE_WRITER",
    "GLOBAL_NOTE",
    "OFFLINE_WRITER",
    "ChatReportWriter",
    "CommunitiesBuilt",
    "Community",
    "CommunityFound",
    "CommunityListing",
    "CommunityOptions",
    "CommunityReport",
    "CommunityService",
    "CommunityStaleness",
    "DetectedCommunity",
    "Detection",
    "DraftFinding",
    "ExtractiveReportWriter",
    "FindingFound",
    "GlobalAnswer",
    "GlobalAnswers",
    "GlobalClaim",
    "GlobalOptions",
    "GraphFact",
    "InCommunity",
    "ReportCitation",
    "ReportDraft",
    "ReportFinding",
    "ReportFound",
    "ReportInput",
    "ReportListing",
    "ReportOptions",
    "ReportPreview",
    "ReportService",
    "ReportWriter",
    "ReportsWritten",
    "StaleCommunity",
    "detect",
]
