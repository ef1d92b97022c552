"""``graphrag-orm mcp``: the agent tools over MCP (placeholder, being built)."""

from __future__ import annotations

__all__ = ["mcp"]


def mcp() -> None:
    """Serve the agent tools over MCP."""
    raise NotImplementedError
