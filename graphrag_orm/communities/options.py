"""Community detection settings: the levels kept, the largest community, the graph read."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["CommunityOptions"]


class CommunityOptions(Options):
    """Bounds of one detection; a value outside them is ``ConfigurationError("invalid-option")``.

    ``seed`` fixes the detection's random state: the same graph, options and seed give the
    same communities, run after run.
    """

    max_levels: int = Field(3, ge=1, le=8, description="deeper levels are not kept: CommunityLevels")
    max_community_size: int = Field(
        50, ge=2, le=10_000, description="a larger community is split again; one still larger: CommunitySize"
    )
    max_facts: int = Field(100_000, ge=1, le=1_000_000, description="facts read of the graph: CommunityFacts")
    seed: int = Field(42, ge=0, le=2_147_483_647)
    resolution: float = Field(1.0, ge=0.01, le=100.0, description="higher gives more, smaller communities")
