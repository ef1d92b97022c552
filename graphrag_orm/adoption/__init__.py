"""Adopt a graph neo4j-graphrag wrote: documents and chunks keyed, placed and undone exactly (issue 15)."""
