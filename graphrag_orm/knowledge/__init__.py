"""Reads of the knowledge graph: things by name, a thing's facts, inside a scope."""

from graphrag_orm.knowledge.service import KnowledgeReads
from graphrag_orm.knowledge.values import FactFound, FactsFound, ThingFound, ThingsFound

__all__ = ["FactFound", "FactsFound", "KnowledgeReads", "ThingFound", "ThingsFound"]
