"""Community detection settings: the levels kept, the largest community, the graph read."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["CommunityOptions", "GlobalOptions", "ReportOptions"]


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
    transaction_rows: int = Field(
        20_000,
        ge=1,
        le=1_000_000,
        description="rows (communities, parent links, memberships) a build writes per transaction",
    )


class ReportOptions(Options):
    """Bounds of one report run (graphrag_orm.communities.reports); outside them, ``invalid-option``.

    A run reports on at most ``max_reports`` communities, coarsest level first, one model
    call each with the chat writer (none with the extractive stand-in), each reply at most
    ``max_output_tokens``; what a writer is shown of a community is its first
    ``max_facts_per_report`` facts and the passages that state them, at most
    ``max_chunks_per_report`` passages and ``max_evidence_bytes`` of their text.
    """

    max_reports: int = Field(
        200, ge=1, le=10_000, description="communities reported on (one call each): ReportCommunities"
    )
    max_facts_per_report: int = Field(30, ge=1, le=500, description="facts a writer is shown: ReportFacts")
    max_chunks_per_report: int = Field(8, ge=1, le=64, description="passages a writer is shown: ReportEvidence")
    max_evidence_bytes: int = Field(
        24_000, ge=1_000, le=400_000, description="UTF-8 bytes of those passages: ReportEvidence"
    )
    max_findings: int = Field(8, ge=1, le=50, description="findings kept per report: ReportFindings")
    max_output_tokens: int = Field(1_200, ge=64, le=16_000, description="tokens of one model reply")


class GlobalOptions(Options):
    """Bounds of one global answer (graphrag_orm.communities.global_answers); outside them, ``invalid-option``.

    ``max_reports`` and ``max_findings`` bound both paths (the offline one keeps at most
    ``max_findings`` findings). With a chat model, the map makes at most ``max_map_calls``
    calls, ``lanes`` at once, each shown at most ``map_reports_per_call`` reports and about
    ``max_call_tokens`` input tokens (four UTF-8 bytes a token); the reduce is one call shown
    at most ``max_call_tokens`` of the partial answers; every reply is at most
    ``max_output_tokens``.
    """

    max_reports: int = Field(200, ge=1, le=1_000, description="reports read: GlobalReports")
    max_findings: int = Field(8, ge=1, le=100, description="findings in an offline answer: GlobalFindings")
    max_map_calls: int = Field(8, ge=1, le=64, description="map calls of a model's answer: GlobalMapCalls")
    map_reports_per_call: int = Field(4, ge=1, le=20, description="reports one map call is shown")
    lanes: int = Field(2, ge=1, le=8, description="map calls at once")
    max_call_tokens: int = Field(
        6_000, ge=500, le=64_000, description="estimated input tokens of one call: GlobalCallTokens"
    )
    max_output_tokens: int = Field(800, ge=64, le=16_000, description="tokens of one model reply")
