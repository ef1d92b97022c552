"""The graph question's request (instructions, schema block, question block), its reply schema and reader.

The request is a pure function of the question, the schema text and the output bound,
so a recorded or scripted reply replays (:meth:`ChatRequest.fingerprint`). The question
reaches the model as a JSON string in a ``<question>`` block
(:func:`~graphrag_orm.chat.evidence_block.render_question`), so no question can close a
block or open one of its own; the schema text holds only validated names.

The reply's schema meets strict structured output's rules (one closed object, both
fields required, each nullable)::

    {"cypher": string|null, "insufficient": string|null}

:func:`parse_graph_reply` also reads the two shapes of API.md section 7, absent keys
read as ``null``: ``{"cypher": "..."}`` and ``{"insufficient": "..."}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from graphrag_orm.chat.base import ChatRequest, json_request
from graphrag_orm.chat.endpoint import nullable
from graphrag_orm.chat.evidence_block import render_question
from graphrag_orm.chat.reply_json import is_utf8, read_object

__all__ = [
    "GRAPH_INSTRUCTIONS",
    "GRAPH_SCHEMA",
    "GRAPH_SCHEMA_NAME",
    "GraphReply",
    "graph_request",
    "parse_graph_reply",
]

GRAPH_SCHEMA_NAME: Final = "graph_query"
"""``ChatRequest.schema_name`` of a graph question: a schema block and a question block."""

GRAPH_INSTRUCTIONS: Final = """\
You write one read-only Cypher query that answers a question about a Neo4j graph, or you say
that the graph cannot answer it.

The user message holds a <schema> block (the graph's labels, relationship types and
properties) and a <question> block (one line of JSON: the question as a string).

Reply with one JSON object: {"cypher": ..., "insufficient": ...}.

When the graph can answer the question:
- "cypher": one statement that only reads: MATCH, OPTIONAL MATCH, WHERE, WITH, UNWIND,
  RETURN, ORDER BY, LIMIT, aggregations and CALL { } subqueries. Never CREATE, MERGE, SET,
  DELETE, REMOVE, LOAD CSV, a procedure call (CALL name()), USE, SHOW, or a plugin's
  function (apoc.*). No semicolon and no parameters ($name): write values as literals.
- Use only the labels, relationship types, directions and properties of the schema.
- Return named columns (RETURN b.name AS bike), the properties asked for rather than whole
  nodes, in a stable order (ORDER BY) when the question lists things.
- Compare names as the question writes them; use toLower(...) on both sides when the case
  may differ.
- "insufficient": null.

When the schema holds nothing that answers the question (a property, a kind of thing or a
relationship it does not have):
- "cypher": null,
- "insufficient": one sentence saying what the graph lacks.

Never answer from your own knowledge, and never write the answer itself: the query's rows
are the answer."""

_NULLABLE_STRING: Final = nullable({"type": "string"})

GRAPH_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"cypher": _NULLABLE_STRING, "insufficient": _NULLABLE_STRING},
    "required": ["cypher", "insufficient"],
    "additionalProperties": False,
}
"""The reply's JSON schema, strict-compatible (a closed object, both fields required and nullable)."""

_KEYS: Final = frozenset(GRAPH_SCHEMA["properties"])


def graph_request(question: str, schema: str, max_output_tokens: int) -> ChatRequest:
    """The chat request for ``question`` over ``schema`` (the :func:`schema_text`), temperature 0.

    Strict structured output with :data:`GRAPH_SCHEMA`, named :data:`GRAPH_SCHEMA_NAME`.
    """
    user = (
        "Write one read-only Cypher query for the question, using only this schema.\n\n"
        f"<schema>\n{schema.rstrip()}\n</schema>\n\n"
        f"{render_question(question)}"
    )
    return json_request(
        GRAPH_INSTRUCTIONS, user, schema=GRAPH_SCHEMA, name=GRAPH_SCHEMA_NAME, max_output_tokens=max_output_tokens
    )


@dataclass(frozen=True, slots=True)
class GraphReply:
    """What a reply says: ``problem`` alone, or ``cypher`` (non-blank, as written), ``declined``, or both."""

    cypher: str | None = None
    declined: str | None = None
    problem: str | None = None


def parse_graph_reply(text: str, *, truncated: bool = False) -> GraphReply:
    """Read a reply under these rules; never raises.

    Unreadable (``problem`` set): a reply cut at the output limit (``truncated``); text
    that is not one JSON value (whitespace around it is allowed; a Markdown fence is
    not); a value that is not an object; an unknown or repeated key; a field that is
    neither a string nor null; a string holding a lone surrogate; an object with neither
    a non-blank ``cypher`` nor a non-blank ``insufficient``.

    Declined: ``insufficient`` holds non-whitespace text. ``cypher`` is the query, exactly
    as written (the gates judge it), read beside a decline too: small models fill both.
    """
    if truncated:
        return GraphReply(problem="the reply was cut off at the output limit")
    value = read_object(text, _KEYS)
    if isinstance(value, str):
        return GraphReply(problem=value)
    cypher, insufficient = value.get("cypher"), value.get("insufficient")
    if not isinstance(cypher, str | None) or not isinstance(insufficient, str | None):
        return GraphReply(problem="cypher and insufficient must be strings or null")
    if not all(is_utf8(s) for s in (cypher, insufficient) if s):
        return GraphReply(problem="a string holds a lone surrogate")
    declined = insufficient if insufficient is not None and insufficient.strip() else None
    if cypher is None or not cypher.strip():
        if declined is not None:
            return GraphReply(declined=declined)
        return GraphReply(problem="the reply neither gives a query nor says the graph cannot answer")
    return GraphReply(cypher=cypher, declined=declined)
