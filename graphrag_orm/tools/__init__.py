"""Agent tools whose results carry checked citations, and the MCP server that serves them.

``GraphRagTools(rag, ToolOptions(), trail=ToolTrail(), scope=...)`` gives OpenAI function
tools (:meth:`~GraphRagTools.definitions`) and runs them (:meth:`~GraphRagTools.call`);
:data:`INSTRUCTIONS` is what an agent using them is told.
``graphrag_orm.tools.mcp.build_mcp_server(rag)`` serves the same tools over MCP (it
imports the ``mcp`` package, so nothing here imports it).
"""

from graphrag_orm.tools.instructions import INSTRUCTIONS
from graphrag_orm.tools.schemas import MAX_SEARCH_LIMIT
from graphrag_orm.tools.service import TOOL_SPAN, GraphRagTools, ToolOptions, ToolSpec
from graphrag_orm.tools.trail import ToolTrail, TrailRecorder
from graphrag_orm.tools.values import (
    EVIDENCE_LABEL,
    REFUSAL_NOTE,
    ToolAnswer,
    ToolCall,
    ToolError,
    ToolErrorCode,
    ToolEvidence,
    ToolFact,
    ToolFacts,
    ToolName,
    ToolPassage,
    ToolPassages,
    ToolResult,
    ToolThing,
    ToolThings,
)

__all__ = [
    "EVIDENCE_LABEL",
    "INSTRUCTIONS",
    "MAX_SEARCH_LIMIT",
    "REFUSAL_NOTE",
    "TOOL_SPAN",
    "GraphRagTools",
    "ToolAnswer",
    "ToolCall",
    "ToolError",
    "ToolErrorCode",
    "ToolEvidence",
    "ToolFact",
    "ToolFacts",
    "ToolName",
    "ToolOptions",
    "ToolPassage",
    "ToolPassages",
    "ToolResult",
    "ToolSpec",
    "ToolThing",
    "ToolThings",
    "ToolTrail",
    "TrailRecorder",
]
