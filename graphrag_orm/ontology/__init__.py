"""Ontologies: the kinds of things, facts, mentions and quotes extraction may write."""

from graphrag_orm.ontology.entities import (
    MENTION_TYPE,
    Entity,
    Fact,
    Mention,
    Quote,
    Quoted,
    Says,
    entity_id,
    fact_model,
    join_aliases,
    mention_key,
    normalize_name,
    placeholder_id,
    quote_key,
    quote_model,
    split_aliases,
    tenant_thing_id,
)
from graphrag_orm.ontology.model_schema import EXTRACTOR_VERSION, ModelSchema
from graphrag_orm.ontology.ontology import FactType, Ontology, QuoteType

__all__ = [
    "EXTRACTOR_VERSION",
    "MENTION_TYPE",
    "Entity",
    "Fact",
    "FactType",
    "Mention",
    "ModelSchema",
    "Ontology",
    "Quote",
    "QuoteType",
    "Quoted",
    "Says",
    "entity_id",
    "fact_model",
    "join_aliases",
    "mention_key",
    "normalize_name",
    "placeholder_id",
    "quote_key",
    "quote_model",
    "split_aliases",
    "tenant_thing_id",
]
