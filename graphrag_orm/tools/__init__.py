"""Agent tools whose results carry checked citations, and the MCP server that serves them."""
