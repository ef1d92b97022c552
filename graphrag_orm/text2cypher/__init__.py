"""Questions about the graph (Text2Cypher, ``rag.graph``): a model writes one read-only query,
the sandbox gates and runs it, and the rows come back; never prose over them.

``GraphQuestions(store, model, chat, Text2CypherOptions(), ontology).ask(question)``
returns a :class:`GraphAnswer`: the query, its columns and rows, or a refusal with its
reason (:class:`~graphrag_orm.codes.GraphRefusal`). The model sees the question and
:func:`schema_text`, generated from the model classes and the ontology. Off until
enabled: ``GraphRag(..., text2cypher=Text2CypherOptions())``.
"""

from graphrag_orm.text2cypher.options import MAX_GRAPH_ROWS, MAX_QUESTION_CHARS, Text2CypherOptions
from graphrag_orm.text2cypher.prompt import (
    GRAPH_INSTRUCTIONS,
    GRAPH_SCHEMA,
    GRAPH_SCHEMA_NAME,
    GraphReply,
    graph_request,
    parse_graph_reply,
)
from graphrag_orm.text2cypher.schema_text import schema_text
from graphrag_orm.text2cypher.service import GraphQuestions
from graphrag_orm.text2cypher.tenants import MAX_TENANT_DATABASES, TenantDatabases, TenantGraphQuestions
from graphrag_orm.text2cypher.values import GraphAnswer, GraphReceipt

__all__ = [
    "GRAPH_INSTRUCTIONS",
    "GRAPH_SCHEMA",
    "GRAPH_SCHEMA_NAME",
    "MAX_GRAPH_ROWS",
    "MAX_QUESTION_CHARS",
    "MAX_TENANT_DATABASES",
    "GraphAnswer",
    "GraphQuestions",
    "GraphReceipt",
    "GraphReply",
    "TenantDatabases",
    "TenantGraphQuestions",
    "Text2CypherOptions",
    "graph_request",
    "parse_graph_reply",
    "schema_text",
]
