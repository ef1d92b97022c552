"""Shared pieces of the knowledge-graph tests: a small bike ontology, scripted extraction, schema."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from examples.recall.bikes import BIKES, Bike, Bulletin, Part, Supplier
from graphrag_orm.chat import ChatRequest, ScriptedChat
from graphrag_orm.layout import Layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.schema import CreateStep
from graphrag_orm.store import Store

# The recall sample's ontology: one set of classes per label in a process.
__all__ = ["BIKES", "Bike", "Bulletin", "Part", "Supplier"]


def passage_of(request: ChatRequest) -> str:
    """The chunk text an extraction request carries."""
    content = request.messages[1].content
    assert content.startswith("Passage:\n")
    return content.removeprefix("Passage:\n")


def entity(kind: str, name: str, mentions: list[str] | None = None, aliases: list[str] | None = None) -> dict[str, Any]:
    return {"kind": kind, "name": name, "aliases": aliases or [], "description": None, "mentions": mentions or [name]}


def fact(source: str, fact_type: str, target: str) -> dict[str, Any]:
    return {"type": fact_type, "source": source, "target": target, "role": None, "kind": None, "description": None}


def scripted(replies: Callable[[str], dict[str, Any] | str]) -> ScriptedChat:
    """A chat that answers each passage with ``replies(passage)`` (a dict is sent as JSON)."""

    def respond(request: ChatRequest) -> str:
        reply = replies(passage_of(request))
        return reply if isinstance(reply, str) else json.dumps(reply)

    return ScriptedChat(respond)


@asynccontextmanager
async def ontology_schema(store: Store, ontology: Ontology, layout: Layout = Layout.DEFAULT) -> AsyncIterator[None]:
    """The ontology's constraints and names index, dropped again afterwards."""
    steps = [CreateStep(definition=d) for d in ontology.schema_definitions(layout)]
    for step in steps:
        await store.execute(step.cypher(), name="test.schema.create")
    await store.execute("CALL db.awaitIndexes(60)", name="test.schema.await")
    try:
        yield
    finally:
        await store.execute(
            "MATCH (n) WHERE NOT n:GraphRagMigration AND NOT n:GraphRagTestDatabase "
            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS",
            name="test.wipe",
        )
        for step in steps:
            await store.execute(step.inverse().cypher(), name="test.schema.drop")
