"""``graphrag-orm reembed plan | backfill | complete | cleanup``: re-embedding as a reviewed plan.

The sets: ``--from-*`` is the set the graph holds now (default: the environment's,
GRAPHRAG_EMBEDDING_MODEL and GRAPHRAG_EMBEDDING_DIMENSIONS, else the offline set);
``--to-model`` (and ``--to-dimensions``, except for a local model) is the new one. The
new set's embedder is the environment's when the environment names that set (a live,
replayed or recorded provider model, or a local one), the local model of that name, or
the hashing stand-in for the offline set's model at any dimensions; any other model is
refused with ``model-setting-missing`` (name it in the environment). The layout is
``--layout`` with ``--embedding-property`` as its live property (after one re-embedding,
the staging property of the last one). ``plan`` and ``cleanup`` can write their steps
as a revision of the application's chain (``--dir`` and ``--revision``) for
``graphrag-orm migrations apply``. A refusal is one line with its code, exit code 1.

In a tenanted graph (GRAPHRAG_TENANCY=required) ``plan``, ``backfill``, ``complete`` and
``cleanup`` are the tenant's (``--tenant``; its chunks only), and ``status`` (no tenant) is
the operator's read of every tenant's progress, which says when the cut-over may go ahead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from graphrag_orm.cli._common import console, fail, print_json, run, with_database
from graphrag_orm.cli.migrations import LAYOUTS, _tenanted, _with_tenancy
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import Embedder, EmbeddingSet, HashingEmbedder, Similarity
from graphrag_orm.embeddings.local import LOCAL_MODELS
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.environment import embedding_set_from_env, models_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.migrate import Chain, Revision, write_revision
from graphrag_orm.reembedding import (
    DEFAULT_STAGING_PROPERTY,
    BackfillOptions,
    BackfillProgress,
    BackfillReceipt,
    CleanupReceipt,
    CompleteReceipt,
    PageOptions,
    Reembedding,
    ReembeddingPlan,
    ReembeddingPreview,
)
from graphrag_orm.reembedding.options import MAX_BACKFILL_PAGE, MAX_PAGE
from graphrag_orm.reembedding.tenants import DEFAULT_LISTED_TENANTS, MAX_LISTED_TENANTS, progress_by_tenant
from graphrag_orm.schema import MigrationStep
from graphrag_orm.store import Store
from graphrag_orm.tenancy import TENANT_ENV, Tenant

__all__ = ["app", "backfill", "cleanup", "complete", "plan", "status"]

T = TypeVar("T")

app = typer.Typer(
    help="Re-embedding as a reviewed plan: a staged index, a resumable backfill, a cut-over, a cleanup.",
    no_args_is_help=True,
)

#: The subcommand that reads across tenants (administrative): it takes no tenant.
ACROSS_TENANTS = "status"


@app.callback()
def _tenant_of_the_plan(context: typer.Context) -> None:
    """In a tenanted graph each tenant re-embeds its own chunks: every subcommand but ``status``
    needs --tenant (``tenant-required`` before anything is opened); ``status`` reads across
    tenants and is refused with one (``tenant-refused``)."""
    if "--help" in sys.argv[1:] or not _tenanted():
        return
    bound = os.environ.get(TENANT_ENV)
    if context.invoked_subcommand == ACROSS_TENANTS and bound:
        fail(
            "reembed status reads every tenant's progress (an operator's read): run it without --tenant",
            ErrorCode.TENANT_REFUSED,
        )
    if context.invoked_subcommand != ACROSS_TENANTS and not bound:
        fail(
            "this graph is tenanted (GRAPHRAG_TENANCY=required): each tenant re-embeds its own chunks, "
            "name it with --tenant; `reembed status` shows every tenant's progress",
            ErrorCode.TENANT_REQUIRED,
        )


FromModel = typer.Option(None, "--from-model", help="The set the graph holds now (default GRAPHRAG_EMBEDDING_MODEL).")
FromDimensions = typer.Option(None, "--from-dimensions", help="Its dimensions (default GRAPHRAG_EMBEDDING_DIMENSIONS).")
FromSimilarity = typer.Option(Similarity.COSINE, "--from-similarity")
ToModel = typer.Option(..., "--to-model", help="The new set's model.")
ToDimensions = typer.Option(None, "--to-dimensions", help="The new set's dimensions (a local model gives its own).")
ToSimilarity = typer.Option(Similarity.COSINE, "--to-similarity")
StagingOption = typer.Option(
    DEFAULT_STAGING_PROPERTY, "--staging-property", help="The chunk property the new vectors go to."
)
LiveOption = typer.Option(None, "--embedding-property", help="The live vector property (default: the layout's).")
LayoutOption = typer.Option("default", "--layout", help="default or neo4j-graphrag.")
IndexOption = typer.Option(None, "--vector-index", help="The new index's name (default: derived from the new set).")
JsonOption = typer.Option(False, "--json", help="Print the receipt as JSON.")
DirOption = typer.Option(None, "--dir", help="The application's chain folder, to write the steps as a revision.")
RevisionOption = typer.Option(None, "--revision", help="The revision id to write (with --dir).")
PageOption = typer.Option(1_000, "--page-size", min=1, max=MAX_PAGE, help="Chunks changed a transaction.")
MaxPagesOption = typer.Option(10_000, "--max-pages", min=1, max=1_000_000, help="Pages in this call; more is reported.")


class _Sets:
    """The command's sets, layout and names, as typed."""

    def __init__(
        self,
        from_model: str | None,
        from_dimensions: int | None,
        from_similarity: Similarity,
        to_model: str,
        to_dimensions: int | None,
        to_similarity: Similarity,
        layout: str,
        live: str | None,
        staging: str,
        vector_index: str | None,
    ) -> None:
        if layout not in LAYOUTS:
            raise typer.BadParameter(f"layout must be one of {sorted(LAYOUTS)}")
        self.from_set = embedding_set_from_env(from_model, from_dimensions, from_similarity)
        self.to_set = embedding_set_from_env(to_model, to_dimensions, to_similarity, environ={})
        chosen = _with_tenancy(LAYOUTS[layout], _tenanted())
        self.layout = chosen.replace(chunk_embedding_property=live) if live else chosen
        self.staging = staging
        self.vector_index = vector_index

    def plan(self, store: Store) -> ReembeddingPlan:
        return Reembedding(store).plan(
            self.layout, self.from_set, self.to_set, self.staging, vector_index=self.vector_index
        )


def _with_plan(sets: _Sets, action: Callable[[ReembeddingPlan], Awaitable[T]]) -> T:
    """Check the plan's names (a refusal before connecting), then run ``action`` on a connected store."""

    async def work() -> T:
        sets.plan(_bound(Store()))  # planning reads nothing: bad names are refused before connecting

        async def on(store: Store) -> T:
            return await action(sets.plan(_bound(store)))

        return await with_database(on)

    return run(work())


def _bound(store: Store) -> Store:
    """``store``, or in a tenanted graph the same driver bound to the command's tenant (--tenant)."""
    if not _tenanted():
        return store
    tenant = Tenant(os.environ[TENANT_ENV])  # the group's callback required it
    driver = store.driver if store.connected else None
    return Store(driver, database=store.database, tenanted=True, tenant=tenant)


def _guard(build: Callable[[], T]) -> T:
    """``build()``; a GraphRagError (a set, an option, the environment) ends the command as one line."""
    try:
        return build()
    except GraphRagError as error:
        fail(error.message, error.code)


def _embedder_for(to_set: EmbeddingSet) -> Embedder:
    choice = _guard(models_from_env)
    if choice.embedding_set.id == to_set.id:
        return choice.embedder
    if to_set.model in LOCAL_MODELS:
        from graphrag_orm.embeddings import LocalEmbedder

        return _guard(lambda: LocalEmbedder(to_set.model))
    if to_set.model == OFFLINE_EMBEDDING_SET.model:
        return HashingEmbedder(to_set.dimensions)
    fail(
        f"no embedder for {to_set.id}: name it in GRAPHRAG_EMBEDDING_MODEL and GRAPHRAG_EMBEDDING_DIMENSIONS "
        "(with GRAPHRAG_MODEL_MODE live, replay or record), or choose a local model",
        ErrorCode.MODEL_SETTING_MISSING,
    )


def _write_steps(directory: Path | None, revision: str | None, steps: list[MigrationStep], message: str) -> None:
    if directory is None:
        if revision is not None:
            raise typer.BadParameter("--revision needs --dir (the chain's folder)")
        return
    if revision is None:
        raise typer.BadParameter("--dir needs --revision (the new revision's id)")
    chain = Chain.load(directory) if directory.exists() else None
    head = chain.head if chain is not None else None
    path = _guard(lambda: write_revision(directory, Revision.new(revision, head, message, steps)))
    console.print(f"wrote {path}; review it, then `graphrag-orm migrations apply --dir {directory}`")


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {plural or word + 's'}"


def _print_preview(preview: ReembeddingPreview) -> None:
    console.print(f"embedding set: {preview.from_set_id} -> {preview.to_set_id}", markup=False, soft_wrap=True)
    console.print(f"property:      {preview.live_property} -> {preview.staging_property}", markup=False)
    console.print(
        f"vector index:  {preview.old_index} ({preview.old_index_state or 'absent'}) -> "
        f"{preview.new_index} ({preview.new_index_state or 'absent'})",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"stage {preview.stage.value}: {preview.chunks} chunks, {preview.backfilled} backfilled, "
        f"{preview.to_do} to do, {preview.completed} completed, {preview.old_vectors} with an old vector"
    )
    console.print("-- prepare (a revision of your chain, before backfill):")
    for statement in preview.prepare_cypher:
        console.print(statement + ";", markup=False, soft_wrap=True)
    console.print("-- cleanup (a revision of your chain, after complete):")
    for statement in preview.cleanup_cypher:
        console.print(statement + ";", markup=False, soft_wrap=True)


@app.command()
def plan(
    to_model: str = ToModel,
    to_dimensions: int | None = ToDimensions,
    to_similarity: Similarity = ToSimilarity,
    from_model: str | None = FromModel,
    from_dimensions: int | None = FromDimensions,
    from_similarity: Similarity = FromSimilarity,
    staging_property: str = StagingOption,
    embedding_property: str | None = LiveOption,
    layout: str = LayoutOption,
    vector_index: str | None = IndexOption,
    directory: Path | None = DirOption,
    revision: str | None = RevisionOption,
) -> None:
    """Print the plan's steps (Cypher), its stage and counts; reads only. --dir writes the prepare revision."""
    sets = _guard(
        lambda: _Sets(
            from_model,
            from_dimensions,
            from_similarity,
            to_model,
            to_dimensions,
            to_similarity,
            layout,
            embedding_property,
            staging_property,
            vector_index,
        )
    )
    steps: list[MigrationStep] = []

    async def read(chosen: ReembeddingPlan) -> ReembeddingPreview:
        steps.extend(chosen.prepare_steps())
        return await chosen.preview()

    _print_preview(_with_plan(sets, read))
    _write_steps(directory, revision, steps, f"re-embedding: prepare the index of {sets.to_set.id}")


@app.command()
def backfill(
    to_model: str = ToModel,
    to_dimensions: int | None = ToDimensions,
    to_similarity: Similarity = ToSimilarity,
    from_model: str | None = FromModel,
    from_dimensions: int | None = FromDimensions,
    from_similarity: Similarity = FromSimilarity,
    staging_property: str = StagingOption,
    embedding_property: str | None = LiveOption,
    layout: str = LayoutOption,
    vector_index: str | None = IndexOption,
    page_size: int = typer.Option(100, "--page-size", min=1, max=MAX_BACKFILL_PAGE, help="Chunks a page."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, max=256, help="Texts per embedding call."),
    max_pages: int = MaxPagesOption,
    as_json: bool = JsonOption,
) -> None:
    """Embed the chunks still to do with the new set's embedder, in pages; run it again to resume."""
    sets = _guard(
        lambda: _Sets(
            from_model,
            from_dimensions,
            from_similarity,
            to_model,
            to_dimensions,
            to_similarity,
            layout,
            embedding_property,
            staging_property,
            vector_index,
        )
    )
    embedder = _embedder_for(sets.to_set)
    options = _guard(lambda: BackfillOptions(page_size=page_size, embedding_batch_size=batch_size, max_pages=max_pages))

    async def work(chosen: ReembeddingPlan) -> BackfillReceipt:
        columns = (TextColumn("backfill"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=as_json) as bar:
            task = bar.add_task("chunks", total=None)

            def advance(progress: BackfillProgress) -> None:
                bar.update(task, completed=progress.chunks_embedded, total=progress.to_do)

            return await chosen.backfill(embedder, options, progress=advance)

    receipt = _with_plan(sets, work)
    if as_json:
        print_json(receipt.to_json())
        return
    label = getattr(embedder, "label", type(embedder).__name__)
    console.print(f"embedder: {label}")
    limits = ", ".join(f"{limit.name.value} {limit.value}" for limit in receipt.limits_reached)
    console.print(
        f"backfilled {_n(receipt.chunks_embedded, 'chunk')} in {_n(receipt.pages, 'page')} "
        f"({_n(receipt.embedding_calls, 'embedding call')}, {_n(receipt.retries.retries, 'retry', 'retries')}, "
        f"{receipt.seconds:.1f} s); {receipt.chunks_left} still to do"
        + (f"; limits reached: {limits}" if limits else "")
    )
    if receipt.chunks_left == 0 and _tenanted():
        console.print(
            f"tenant {os.environ[TENANT_ENV]} is backfilled; cut over once `graphrag-orm reembed status` "
            "(without --tenant) shows every tenant backfilled, then `reembed complete` for each tenant"
        )
    elif receipt.chunks_left == 0:
        console.print("next: cut over to the new layout and set, then `graphrag-orm reembed complete`")


@app.command()
def complete(
    to_model: str = ToModel,
    to_dimensions: int | None = ToDimensions,
    to_similarity: Similarity = ToSimilarity,
    from_model: str | None = FromModel,
    from_dimensions: int | None = FromDimensions,
    from_similarity: Similarity = FromSimilarity,
    staging_property: str = StagingOption,
    embedding_property: str | None = LiveOption,
    layout: str = LayoutOption,
    vector_index: str | None = IndexOption,
    page_size: int = PageOption,
    max_pages: int = MaxPagesOption,
    as_json: bool = JsonOption,
) -> None:
    """After cut-over: record the new set's id on every backfilled chunk, in pages."""
    sets = _guard(
        lambda: _Sets(
            from_model,
            from_dimensions,
            from_similarity,
            to_model,
            to_dimensions,
            to_similarity,
            layout,
            embedding_property,
            staging_property,
            vector_index,
        )
    )
    options = _guard(lambda: PageOptions(page_size=page_size, max_pages=max_pages))
    receipt: CompleteReceipt = _with_plan(sets, lambda chosen: chosen.complete(options))
    if as_json:
        print_json(receipt.to_json())
        return
    console.print(
        f"completed {_n(receipt.chunks_completed, 'chunk')} in {_n(receipt.pages, 'page')} "
        f"({receipt.seconds:.1f} s); "
        f"{receipt.chunks_not_backfilled} not backfilled"
    )


@app.command()
def cleanup(
    to_model: str = ToModel,
    to_dimensions: int | None = ToDimensions,
    to_similarity: Similarity = ToSimilarity,
    from_model: str | None = FromModel,
    from_dimensions: int | None = FromDimensions,
    from_similarity: Similarity = FromSimilarity,
    staging_property: str = StagingOption,
    embedding_property: str | None = LiveOption,
    layout: str = LayoutOption,
    vector_index: str | None = IndexOption,
    page_size: int = PageOption,
    max_pages: int = MaxPagesOption,
    directory: Path | None = DirOption,
    revision: str | None = RevisionOption,
    as_json: bool = JsonOption,
) -> None:
    """Remove the old vectors of completed chunks, in pages. --dir writes the revision that drops the old index."""
    sets = _guard(
        lambda: _Sets(
            from_model,
            from_dimensions,
            from_similarity,
            to_model,
            to_dimensions,
            to_similarity,
            layout,
            embedding_property,
            staging_property,
            vector_index,
        )
    )
    options = _guard(lambda: PageOptions(page_size=page_size, max_pages=max_pages))
    steps: list[MigrationStep] = []

    async def work(chosen: ReembeddingPlan) -> CleanupReceipt:
        steps.extend(chosen.cleanup_steps())
        return await chosen.cleanup(options)

    receipt = _with_plan(sets, work)
    if as_json:
        print_json(receipt.to_json())
    else:
        console.print(
            f"removed {_n(receipt.old_vectors_removed, 'old vector')} in {_n(receipt.pages, 'page')} "
            f"({receipt.seconds:.1f} s); "
            f"{receipt.chunks_not_completed} chunks not completed keep theirs"
        )
        console.print("-- cleanup (a revision of your chain):")
        for step in steps:
            console.print(step.cypher() + ";", markup=False, soft_wrap=True)
    _write_steps(directory, revision, steps, f"re-embedding: drop the index of {sets.from_set.id}")


@app.command()
def status(
    to_model: str = ToModel,
    to_dimensions: int | None = ToDimensions,
    to_similarity: Similarity = ToSimilarity,
    staging_property: str = StagingOption,
    embedding_property: str | None = LiveOption,
    layout: str = LayoutOption,
    limit: int = typer.Option(
        DEFAULT_LISTED_TENANTS, "--limit", min=1, max=MAX_LISTED_TENANTS, help="Tenants listed (all are counted)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """A tenanted graph: every tenant's progress towards the new set, and whether the cut-over may go ahead.

    Reads across tenants (the operator's read; counts only), so it takes no --tenant. Exit
    code 0 when every chunk is backfilled, 2 when some tenant still has chunks to do.
    """
    if not _tenanted():
        fail(
            "reembed status is of a tenanted graph (GRAPHRAG_TENANCY=required); here `reembed plan` shows the progress",
            ErrorCode.INVALID_OPTION,
        )
    to_set = _guard(lambda: embedding_set_from_env(to_model, to_dimensions, to_similarity, environ={}))
    chosen = _with_tenancy(LAYOUTS[layout], True) if layout in LAYOUTS else None
    if chosen is None:
        raise typer.BadParameter(f"layout must be one of {sorted(LAYOUTS)}")
    if embedding_property:
        chosen = chosen.replace(chunk_embedding_property=embedding_property)
    progress = run(
        with_database(lambda store: progress_by_tenant(store, chosen, to_set, staging_property, limit=limit))
    )
    if as_json:
        print_json(progress.to_json())
    else:
        console.print(f"re-embedding to {progress.to_set_id}, on {staging_property}:", markup=False)
        for entry in progress.shown:
            console.print(
                f"  {entry.tenant}: {_n(entry.chunks, 'chunk')}, {entry.to_do} to do, {entry.backfilled} backfilled, "
                f"{entry.completed} completed, {entry.old_vectors} with an old vector",
                markup=False,
                soft_wrap=True,
            )
        if progress.limits_reached:
            console.print(f"  ... {progress.tenants - len(progress.shown)} more tenants (--limit); all are counted")
        console.print(
            f"{_n(progress.tenants, 'tenant')}, {progress.waiting} with chunks to do, {_n(progress.to_do, 'chunk')} to do"
            + (f"; {_n(progress.untenanted, 'chunk')} without a tenant" if progress.untenanted else "")
        )
        if progress.ready:
            console.print(
                "every chunk is backfilled: cut over, then `graphrag-orm --tenant T reembed complete` per tenant"
            )
        else:
            console.print(
                "do not cut over yet: `graphrag-orm --tenant T reembed backfill` for each tenant with chunks to do"
            )
    if not progress.ready:
        raise typer.Exit(2)
