"""The leak suite of tenancy (docs/tenancy.md, "The leak suite"): two tenants with near-identical
documents in one graph, and every surface, bound to one of them, asked for the other's secret.

One corpus (``conftest.leaks``, written once for the package through each tenant's own view);
every test reads it and scans the whole of what a surface returned (``corpus.Leaks``) for any
byte of the other tenant's text, ids or counts. Each surface also has its coded refusal when
bound to no tenant (``tenant-required``, nothing sent). The surfaces, by module:

- ``test_python``: retrieval (each route, a scope naming the other's documents), answers,
  answers and streams with history carried from the other tenant's turn, the catalog;
- ``test_cli``: ``ask``, ``search``, ``documents``, ``runs``, ``show``, ``eval``;
- ``test_http``: ``/ask`` (server-sent events), ``/search``, ``/documents``, ``/documents/{id}``,
  and the explorer page's own calls;
- ``test_agents``: the agent tools, MCP (in process and ``graphrag-orm mcp`` over stdio), the
  LangChain and LlamaIndex retrievers (a blocking twin's too);
- ``test_evaluation``: the evaluator's report and its stored-chunk reads;
- ``test_graph``: the knowledge graph (a document extracted for that module only): the graph
  route, answers with it, the knowledge tools, and health and orphan removal of things;
- ``test_maintenance``: the previews of a reset and of a tenant's removal, the health report
  and orphan removal (Python and CLI), with a finding only the other tenant has.

Export is the answer export, which reads nothing from the graph: it has no test here.
"""
