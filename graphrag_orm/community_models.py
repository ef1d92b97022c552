"""The knowledge graph's communities and their reports, as neomodel async classes.

Abstract bases, like the lexical nodes of :mod:`graphrag_orm.models`, which gives them the
layout's labels (``community_label``, ``report_label``, ``finding_label``) and adds the
self-reference and the report links per layout (:func:`graphrag_orm.models.for_layout`).
"""

from __future__ import annotations

from typing import Final

from neomodel import (
    ArrayProperty,
    AsyncStructuredNode,
    AsyncStructuredRel,
    DateTimeNeo4jFormatProperty,
    IntegerProperty,
    StringProperty,
)

__all__ = [
    "HAS_FINDING",
    "HAS_REPORT",
    "IN_COMMUNITY",
    "PARENT_COMMUNITY",
    "CommunityNode",
    "CommunityReportNode",
    "InCommunity",
    "ReportFindingNode",
]

# The communities of the knowledge graph (graphrag_orm.communities): one node per community
# and level, labelled with the layout's community_label (Community by default). A member thing points at its community with
# IN_COMMUNITY (one per level it is placed at); a community below level 0 points at the
# one it was split from with PARENT_COMMUNITY. The fingerprint hashes the members and the
# facts among them, so a change to either shows as a different fingerprint.

IN_COMMUNITY: Final = "IN_COMMUNITY"
PARENT_COMMUNITY: Final = "PARENT_COMMUNITY"


class InCommunity(AsyncStructuredRel):
    """A thing's place in a community (thing to community), stamped with the build that wrote it."""

    build_id = StringProperty(required=True, db_property="buildId")


class CommunityNode(AsyncStructuredNode):
    """A community of things at one level (0 the coarsest), written whole by one build.

    Its label is the layout's ``community_label``; ``parent`` (``PARENT_COMMUNITY``) is
    added per layout, as a self-reference needs the concrete class.
    """

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    level = IntegerProperty(required=True, index=True, db_property="level")
    size = IntegerProperty(required=True, db_property="size")
    facts = IntegerProperty(required=True, db_property="facts")
    fingerprint = StringProperty(required=True, db_property="fingerprint")
    build_id = StringProperty(required=True, index=True, db_property="buildId")
    built_at = DateTimeNeo4jFormatProperty(required=True, db_property="builtAt")


# A community's report (graphrag_orm.communities.reports): a title and findings, each finding
# citing stored bytes. (community)-[:HAS_REPORT]->(report)-[:HAS_FINDING]->(finding). The
# finding's citations are parallel lists (chunk, document, byte span, stored quote), each
# located byte-exact in its chunk when the report was written; a report is stored only with
# at least one such finding. Reports are written whole by one run and replaced by the next;
# a removal of documents retracts the findings they alone supported, in its own transaction.

HAS_REPORT: Final = "HAS_REPORT"
HAS_FINDING: Final = "HAS_FINDING"


class ReportFindingNode(AsyncStructuredNode):
    """One finding of a report: its text and its verified citations (parallel lists, one per citation)."""

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    report_id = StringProperty(required=True, index=True, db_property="reportId")
    position = IntegerProperty(required=True, db_property="position")
    text = StringProperty(required=True, db_property="text")
    chunk_ids = ArrayProperty(StringProperty(), required=True, db_property="chunkIds")
    document_ids = ArrayProperty(StringProperty(), required=True, db_property="documentIds")
    start_bytes = ArrayProperty(IntegerProperty(), required=True, db_property="startBytes")
    end_bytes = ArrayProperty(IntegerProperty(), required=True, db_property="endBytes")
    quotes = ArrayProperty(StringProperty(), required=True, db_property="quotes")


class CommunityReportNode(AsyncStructuredNode):
    """A community's report: its title, the findings kept and dropped, who wrote it, from which fingerprint.

    Its label is the layout's ``report_label``; ``findings`` (``HAS_FINDING``) is added per layout.
    """

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    community_id = StringProperty(required=True, index=True, db_property="communityId")
    level = IntegerProperty(required=True, db_property="level")
    title = StringProperty(required=True, db_property="title")
    finding_count = IntegerProperty(required=True, db_property="findings")
    unsupported = IntegerProperty(required=True, db_property="unsupported")
    writer = StringProperty(required=True, db_property="writer")
    fingerprint = StringProperty(required=True, db_property="fingerprint")
    run_id = StringProperty(required=True, db_property="runId")
    written_at = DateTimeNeo4jFormatProperty(required=True, db_property="writtenAt")
    #: Findings a removal retracted since it was written (every citation was of a removed document).
    retracted = IntegerProperty(default=0, db_property="retracted")
    #: Findings a removal trimmed since it was written (some citations were of a removed document).
    trimmed = IntegerProperty(default=0, db_property="trimmed")
