"""Communities of the knowledge graph: hierarchical, seeded detection and their stored nodes."""

from graphrag_orm.communities.detection import (
    COMMUNITIES_EXTRA_MISSING,
    DetectedCommunity,
    Detection,
    GraphFact,
    detect,
)
from graphrag_orm.communities.options import CommunityOptions
from graphrag_orm.communities.service import CommunityService
from graphrag_orm.communities.values import CommunitiesBuilt, CommunityFound, CommunityListing
from graphrag_orm.models import Community, InCommunity

__all__ = [
    "COMMUNITIES_EXTRA_MISSING",
    "CommunitiesBuilt",
    "Community",
    "CommunityFound",
    "CommunityListing",
    "CommunityOptions",
    "CommunityService",
    "DetectedCommunity",
    "Detection",
    "GraphFact",
    "InCommunity",
    "detect",
]
