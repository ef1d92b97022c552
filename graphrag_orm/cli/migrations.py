"""``graphrag-orm migrations init|revision|plan|apply|status|check|downgrade``."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import typer
from rich.table import Table

from graphrag_orm.cli._common import OntologyOption, console, fail, load_ontology, run, with_database
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET, EmbeddingSet, Similarity
from graphrag_orm.environment import embedding_set_from_env
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import (
    ApplyReport,
    Chain,
    Migrator,
    RevisionState,
    SchemaCheck,
    chain_for_embedding_set,
    initial_revision,
    next_revision,
    refuse_other_embedding_set,
    write_revision,
)
from graphrag_orm.migrate.lock import DEFAULT_LOCK_WAIT_SECONDS, MAX_LOCK_WAIT_SECONDS
from graphrag_orm.store import Store
from graphrag_orm.tenancy import tenancy_from_env

__all__ = ["LAYOUTS", "apply", "check", "downgrade", "init", "plan", "revision", "status"]

app = typer.Typer(help="Reviewed schema migrations.", no_args_is_help=True)

DirOption = typer.Option(
    None,
    "--dir",
    help="The chain's folder (default GRAPHRAG_MIGRATIONS_DIR, else the toolkit's own chain with the vector "
    "index of the configured embedding set: GRAPHRAG_EMBEDDING_MODEL, the local model by default).",
)
LAYOUTS = {"default": Layout.DEFAULT, "neo4j-graphrag": Layout.NEO4J_GRAPHRAG}
LockWaitOption = typer.Option(
    DEFAULT_LOCK_WAIT_SECONDS,
    "--lock-wait",
    min=0.0,
    max=MAX_LOCK_WAIT_SECONDS,
    help="Seconds to wait while another process holds the migration lock (0: refuse at once).",
)


def _chain(directory: Path | None) -> Chain:
    """The chain given (``--dir``, else GRAPHRAG_MIGRATIONS_DIR), as written; else the toolkit's own
    chain and, for an embedding set other than the offline one, the derived revision that swaps
    its vector index for the configured set's (:func:`chain_for_embedding_set`)."""
    return _chain_and_derived_set(directory)[0]


def _chain_and_derived_set(directory: Path | None) -> tuple[Chain, EmbeddingSet | None]:
    """The chain (:func:`_chain`) and the set its derived revision builds the index of (None: no such revision)."""
    configured = directory or (
        Path(os.environ["GRAPHRAG_MIGRATIONS_DIR"]) if os.environ.get("GRAPHRAG_MIGRATIONS_DIR") else None
    )
    if configured is not None:
        return Chain.load(configured), None
    # A tenanted graph (GRAPHRAG_TENANCY=required): the toolkit's chain with its reviewed
    # tenancy revision, and a derived index that declares the tenant too (docs/tenancy.md).
    tenanted = _tenanted()
    toolkit, embedding_set = Chain.load(None, tenanted=tenanted), embedding_set_from_env()
    chain = chain_for_embedding_set(toolkit, embedding_set, _with_tenancy(Layout.DEFAULT, tenanted))
    derived = embedding_set if embedding_set != OFFLINE_EMBEDDING_SET and chain is not toolkit else None
    return chain, derived


ModelOption = typer.Option(None, "--model", help="Embedding model (default GRAPHRAG_EMBEDDING_MODEL).")
DimensionsOption = typer.Option(None, "--dimensions", help="Vector dimensions (default GRAPHRAG_EMBEDDING_DIMENSIONS).")
SimilarityOption = typer.Option(Similarity.COSINE, "--similarity")
LayoutOption = typer.Option("default", "--layout", help="default or neo4j-graphrag.")
VectorFilterOption = typer.Option(
    [],
    "--vector-filter",
    help="A chunk property (stored name, e.g. documentId) the vector index declares for filtering inside it; "
    "repeat for more. Changing it rebuilds the index.",
)


@app.command()
def init(
    directory: Path = typer.Argument(..., help="Folder for the application's chain."),
    model: str | None = ModelOption,
    dimensions: int | None = DimensionsOption,
    similarity: Similarity = SimilarityOption,
    layout: str = LayoutOption,
    ontology: str | None = OntologyOption,
    revision: str = typer.Option("0001_graphrag_schema", "--revision"),
    vector_filter: list[str] = VectorFilterOption,
) -> None:
    """Start an application's chain with the toolkit's schema for its embedding set (and ontology)."""
    chosen = embedding_set_from_env(model, dimensions, similarity)
    made = initial_revision(
        _layout(layout), chosen, load_ontology(ontology), revision=revision, vector_filter=vector_filter
    )
    path = write_revision(directory, made)
    console.print(
        f"wrote {path} for embedding set {chosen.id}; review it, then `graphrag-orm migrations apply --dir {directory}`"
    )


@app.command()
def revision(
    directory: Path = typer.Argument(..., help="The chain's folder."),
    message: str = typer.Option(..., "-m", "--message"),
    revision_id: str = typer.Option(..., "--id", help="The new revision's id, e.g. 0002_bigger_vectors."),
    model: str | None = ModelOption,
    dimensions: int | None = DimensionsOption,
    similarity: Similarity = SimilarityOption,
    layout: str = LayoutOption,
    ontology: str | None = OntologyOption,
    vector_filter: list[str] = VectorFilterOption,
) -> None:
    """Write the next revision: the steps from the chain's head to what the toolkit now declares.

    ``--vector-filter documentId`` declares the chunk's document id on the vector index, so a
    document scope is filtered inside the index; the revision drops and creates the index
    (the server rebuilds it).
    """
    chain = Chain.load(directory)
    made = next_revision(
        chain,
        _layout(layout),
        embedding_set_from_env(model, dimensions, similarity),
        load_ontology(ontology),
        revision=revision_id,
        message=message,
        vector_filter=vector_filter,
    )
    if made is None:
        console.print("nothing to do: the chain's head already declares this schema")
        return
    path = write_revision(directory, made)
    console.print(f"wrote {path} with {len(made.steps)} steps; review it before applying")


@app.command()
def plan(directory: Path | None = DirOption, target: str | None = typer.Option(None, "--target")) -> None:
    """Print the exact Cypher that apply would run; changes nothing."""
    chain = _chain(directory)
    result = run(with_database(lambda store: Migrator(store, chain).plan(target)))
    if not result.revisions:
        console.print("nothing to apply: the database is at the chain's head")
    for item in result.revisions:
        console.print(f"-- {item.revision}: {item.message}")
        for statement in item.cypher:
            console.print(statement + ";", markup=False, soft_wrap=True)


@app.command()
def apply(
    directory: Path | None = DirOption,
    target: str | None = typer.Option(None, "--target"),
    timeout: float = typer.Option(300.0, "--index-timeout", min=1.0, max=3600.0, help="Seconds to wait for ONLINE."),
    lock_wait: float = LockWaitOption,
) -> None:
    """Apply pending revisions in order and wait until every index is ONLINE (one process at a time)."""
    chain, derived = _chain_and_derived_set(directory)
    console.print(f"chain: {chain.source}", markup=False, soft_wrap=True)

    async def work(store: Store) -> ApplyReport:
        migrator = Migrator(store, chain, index_timeout_seconds=timeout, lock_wait_seconds=lock_wait)
        if derived is not None:
            # The derived revision replaces the stand-in's index: never under chunks another set embedded.
            state = {item.revision: item.state for item in (await migrator.status()).revisions}
            if state.get(chain.head or "") == RevisionState.PENDING:
                await refuse_other_embedding_set(store, Layout.DEFAULT, derived)
        return await migrator.apply(target)

    with console.status("applying migrations..."):
        report = run(with_database(work))
    if report.applied:
        console.print(
            f"applied {', '.join(report.applied)} ({report.statements} statements, indexes online after {report.waited_seconds:.1f} s)"
        )
    else:
        console.print("nothing to apply: the database is at the chain's head")


@app.command()
def status(directory: Path | None = DirOption) -> None:
    """Where the database is on the chain (read only); exit code 1 when the two disagree."""
    chain = _chain(directory)
    result = run(with_database(lambda store: Migrator(store, chain).status()))
    table = Table("revision", "state", "applied", "message")
    for item in result.revisions:
        table.add_row(item.revision, item.state.value, item.applied_at or "", item.message)
    console.print(table)
    console.print(f"database head: {result.database_head or '(none)'}; chain head: {result.chain_head or '(none)'}")
    if not result.up_to_date:
        counts = Counter(item.state.value for item in result.revisions if item.state != RevisionState.APPLIED)
        disagree = ", ".join(f"{count} {state}" for state, count in sorted(counts.items())) or "other heads"
        fail(
            f"the database and the chain disagree ({disagree}): `graphrag-orm migrations apply` runs the pending "
            "revisions; an unknown one was applied from another chain (give its folder with --dir)",
            ErrorCode.SCHEMA_MISMATCH,
        )


@app.command()
def check(directory: Path | None = DirOption, prefix: str = typer.Option("graphrag", "--prefix")) -> None:
    """Report missing, different and unexpected schema; exit code 1 when any."""
    chain = _chain(directory)
    result: SchemaCheck = run(with_database(lambda store: Migrator(store, chain).check(prefix=prefix)))
    if result.ok:
        console.print("schema matches the chain's head")
        return
    table = Table("finding", "name", "expected", "actual")
    for kind, items in (
        ("missing", result.missing),
        ("different", result.different),
        ("unexpected", result.unexpected),
        ("not online", result.not_online),
    ):
        for item in items:
            table.add_row(kind, item.name, item.expected or "", item.actual or "")
    console.print(table)
    raise typer.Exit(1)


@app.command()
def downgrade(
    target: str = typer.Argument(..., help="A revision id to go back to, or 'base' to remove everything."),
    directory: Path | None = DirOption,
    yes: bool = typer.Option(False, "--yes", help="Do not ask before dropping."),
    lock_wait: float = LockWaitOption,
) -> None:
    """Undo revisions after TARGET, last first."""
    chain = _chain(directory)
    planned = run(with_database(lambda store: Migrator(store, chain).downgrade_plan(target)))
    for item in planned.revisions:
        console.print(f"-- undo {item.revision}")
        for statement in item.cypher:
            console.print(statement + ";", markup=False, soft_wrap=True)
    if not planned.revisions:
        console.print("nothing to undo")
        return
    if not yes and not typer.confirm("run these statements?"):
        raise typer.Exit(1)
    report = run(with_database(lambda store: Migrator(store, chain, lock_wait_seconds=lock_wait).downgrade(target)))
    console.print(f"undid {', '.join(report.applied)}")


def _tenanted() -> bool:
    """Whether GRAPHRAG_TENANCY says the graph is tenanted (another value: ``invalid-layout``)."""
    return tenancy_from_env() == "required"


def _with_tenancy(layout: Layout, tenanted: bool) -> Layout:
    return layout.replace(tenancy="required") if tenanted else layout


def _layout(name: str) -> Layout:
    """``--layout``, tenanted when GRAPHRAG_TENANCY=required (an application's chain declares the tenant then)."""
    if name not in LAYOUTS:
        raise typer.BadParameter(f"layout must be one of {sorted(LAYOUTS)}")
    return _with_tenancy(LAYOUTS[name], _tenanted())
