"""The endpoints' OpenAPI description: every body, parameter and response, from the values they are read into.

The router reads its bodies and parameters itself (so every refusal is a problem with a
code, never FastAPI's 422), so FastAPI cannot see them; each route passes what is built
here as ``openapi_extra`` and ``responses``. Schemas are inline (no ``components``), so a
router mounted in any application describes itself whole; they are the values' JSON
Schemas in validation mode, camelCase, with the request's bounds (the question bound,
the turns, the limits) filled in from the options the router was built with. Each route
lists only the statuses it sends; a problem is ``application/problem+json``.
"""

from __future__ import annotations

from typing import Any, Final

from graphrag_orm.server.bodies import (
    DEFAULT_DOCUMENTS_LIMIT,
    MAX_DOCUMENTS_LIMIT,
    MAX_SEARCH_LIMIT,
    MAX_TURN_ANSWER_CHARS,
    AskBody,
    SearchBody,
)
from graphrag_orm.server.events import event_types
from graphrag_orm.server.problems import PROBLEM_MEDIA_TYPE, Problem
from graphrag_orm.server.views import DocumentsPage, DocumentView, SearchResult
from graphrag_orm.values import Value

__all__ = ["DOCUMENT_OPERATION", "Described", "schema_of"]

#: The operation id of ``GET {prefix}/documents/{document_id}``, which the documents list links to.
DOCUMENT_OPERATION: Final = "document"

#: A JSON Schema ``pattern`` (unanchored): at least one character that is not whitespace.
_NOT_BLANK: Final = r"\S"

_STATUS_PHRASES: Final = {
    400: "The request was refused before any work",
    403: "A tenanted graph, and no tenant for this request (tenant-required, invalid-tenant); nothing was read",
    404: "No document has this id inside the application's scope",
    500: "The graph could not be read; the application's log has the error",
}


def schema_of(model: type[Value]) -> dict[str, Any]:
    """``model``'s JSON Schema (camelCase, validation mode) with every ``$ref`` replaced by its definition."""
    found = model.model_json_schema(by_alias=True, mode="validation")
    definitions: dict[str, Any] = found.pop("$defs", {})

    def inline(node: Any, depth: int = 0) -> Any:
        if depth > 32:  # the values nest a few levels; a cycle would be a bug here
            raise ValueError(f"{model.__name__}'s schema nests deeper than 32 levels")
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                rest = {key: value for key, value in node.items() if key != "$ref"}
                return {**inline(definitions[reference.removeprefix("#/$defs/")], depth + 1), **rest}
            return {key: inline(value, depth + 1) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(value, depth + 1) for value in node]
        return node

    inlined: dict[str, Any] = inline(found)
    return inlined


def _question(description: str, bound: int) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": bound,
        "pattern": _NOT_BLANK,
        "description": f"{description} 1 to {bound:,} characters, not only whitespace.",
    }


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    schema = schema_of(Problem)
    return {
        status: {"description": _STATUS_PHRASES[status], "content": {PROBLEM_MEDIA_TYPE: {"schema": schema}}}
        for status in statuses
    }


def _ok(description: str, model: type[Value]) -> dict[int | str, dict[str, Any]]:
    return {200: {"description": description, "content": {"application/json": {"schema": schema_of(model)}}}}


def _events_description() -> str:
    lines = [
        "Server-sent events: `retrieved` once, `delta` zero or more times, then one of `verified` or "
        "`refused`; or `error` (`retrieval-failed` before `retrieved`, `model-failed` after it). "
        "Each event is `event: <name>`, one `data:` line of camelCase JSON, a blank line. Each event's data:",
    ]
    lines += [f"- `{name.value}`: {(model.__doc__ or '').strip().splitlines()[0]}" for name, model in event_types()]
    return "\n".join(lines)


def _events() -> dict[str, Any]:
    # One item per event, as FastAPI describes its own event streams (OpenAPI 3.2's itemSchema).
    return {
        "oneOf": [
            {
                "type": "object",
                "title": model.__name__,
                "required": ["event", "data"],
                "properties": {
                    "event": {"const": name.value},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": schema_of(model),
                    },
                },
            }
            for name, model in event_types()
        ]
    }


class Described:
    """What each route passes to FastAPI: ``responses`` and ``openapi_extra``."""

    def __init__(
        self, question_bound: int, max_history_turns: int, *, global_mode: bool = False, tenanted: bool = False
    ) -> None:
        # 403 only where it can be sent: a tenanted graph refuses a request without a tenant.
        refused = (400, 403) if tenanted else (400,)
        unknown = (403, 404) if tenanted else (404,)
        ask = schema_of(AskBody)
        ask["properties"]["question"] = _question("The question.", question_bound)
        mode = ask["properties"]["mode"]
        if global_mode:
            mode["description"] = (
                "documents: from retrieved passages; global: about the whole corpus, from the community "
                "reports (no history)"
            )
            # A global question is no follow-up: its history must be empty.
            ask["if"] = {"properties": {"mode": {"const": "global"}}, "required": ["mode"]}
            ask["then"] = {"properties": {"history": {"maxItems": 0}}}
        else:  # no ontology, no reports: the one mode this graph answers
            mode.pop("enum", None)
            mode["const"] = "documents"
            mode["description"] = "documents: from retrieved passages (this graph has no community reports)"
        turn = ask["properties"]["history"]
        turn["maxItems"] = max_history_turns
        turn["description"] = f"Earlier turns, oldest first: at most {max_history_turns}."
        turn_fields = turn["items"]["properties"]
        turn_fields["question"] = {"type": "string", "maxLength": question_bound}
        turn_fields["answer"] = {"type": "string", "maxLength": MAX_TURN_ANSWER_CHARS}
        search = schema_of(SearchBody)
        search["properties"]["query"] = _question("What to look for, in words.", question_bound)
        search["properties"]["limit"] = {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SEARCH_LIMIT,
            "default": search["properties"]["limit"].get("default"),
            "description": f"How many passages, 1 to {MAX_SEARCH_LIMIT}.",
        }
        self.ask_extra = _json_body(ask)
        self.ask_responses: dict[int | str, dict[str, Any]] = {
            200: {"description": _events_description(), "content": {"text/event-stream": {"itemSchema": _events()}}},
            **_problems(*refused),
        }
        self.search_extra = _json_body(search)
        self.search_responses = {**_ok("Passages, best first", SearchResult), **_problems(*refused, 500)}
        self.documents_extra: dict[str, Any] = {
            "parameters": [
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "description": f"How many documents, 1 to {MAX_DOCUMENTS_LIMIT:,}.",
                    "schema": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_DOCUMENTS_LIMIT,
                        "default": DEFAULT_DOCUMENTS_LIMIT,
                    },
                }
            ]
        }
        documents_ok = _ok("Documents by source URI", DocumentsPage)
        documents_ok[200]["links"] = {
            "document": {
                "operationId": DOCUMENT_OPERATION,
                "parameters": {"document_id": "$response.body#/documents/0/documentId"},
                "description": "The first listed document's metadata and chunk spans.",
            }
        }
        self.documents_responses = {**documents_ok, **_problems(*refused, 500)}
        self.document_extra: dict[str, Any] = {
            "parameters": [
                {
                    "name": "document_id",
                    "in": "path",
                    "required": True,
                    "description": "A document's full id: 64 hexadecimal digits.",
                    "schema": {"type": "string"},
                }
            ]
        }
        self.document_responses = {
            **_ok("The document's metadata and chunk spans", DocumentView),
            **_problems(*unknown, 500),
        }
