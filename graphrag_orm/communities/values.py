"""What a community build and a listing return."""

from __future__ import annotations

from graphrag_orm.values import Limit, Value

__all__ = ["CommunitiesBuilt", "CommunityFound", "CommunityListing"]


class CommunitiesBuilt(Value):
    """One build: the communities written per level, the facts read, the limits reached."""

    build_id: str
    communities: int = 0
    per_level: tuple[int, ...] = ()
    things: int = 0
    facts_read: int = 0
    removed: int = 0
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
