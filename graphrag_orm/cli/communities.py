"""``graphrag-orm communities build|list``: communities of the knowledge graph (graphrag_orm.communities).

``build`` reads the facts of the ontology's fact types, detects communities (the
``communities`` extra) and replaces the stored ones in one transaction, with a progress
line while it works; ``list`` prints the stored communities, coarsest level first. Both
take ``--json``. An ontology is required (its fact types are what joins things).
"""

from __future__ import annotations

import typer
from rich.table import Table

from graphrag_orm.cli._common import OntologyOption, console, fail, load_ontology, print_json, run
from graphrag_orm.codes import ErrorCode
from graphrag_orm.communities import CommunitiesBuilt, CommunityListing, CommunityOptions, CommunityService
from graphrag_orm.communities.service import DEFAULT_LISTED_COMMUNITIES
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.facade import GraphRag

__all__ = ["app"]

app = typer.Typer(help="Communities of the knowledge graph: build them, list them.", no_args_is_help=True)


def _service(ontology_name: str | None, options: CommunityOptions | None = None) -> tuple[GraphRag, CommunityService]:
    try:
        ontology = load_ontology(ontology_name)
        if ontology is None:
            fail("communities need the ontology extraction used: pass --ontology", ErrorCode.INVALID_OPTION)
        rag, _ = graphrag_from_env(ontology=ontology)
    except GraphRagError as error:
        fail(error.message, error.code)
    return rag, CommunityService(rag.store, ontology, options, model=rag.model)


@app.command("build")
def build(
    ontology: str | None = OntologyOption,
    max_levels: int = typer.Option(3, "--max-levels", help="Levels of the hierarchy kept (1 to 8)."),
    max_community_size: int = typer.Option(50, "--max-size", help="A larger community is split (2 to 10,000)."),
    max_facts: int = typer.Option(100_000, "--max-facts", help="Facts read (1 to 1,000,000)."),
    seed: int = typer.Option(42, "--seed", help="The detection's seed: the same graph and seed, the same result."),
    as_json: bool = typer.Option(False, "--json", help="Print the build as JSON."),
) -> None:
    """Detect the communities of the stored facts and replace the stored communities with them."""
    try:
        options = CommunityOptions(
            max_levels=max_levels, max_community_size=max_community_size, max_facts=max_facts, seed=seed
        )
    except GraphRagError as error:
        fail(error.message, error.code)
    rag, service = _service(ontology, options)

    async def work() -> CommunitiesBuilt:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            with console.status("reading facts, detecting and writing communities"):
                return await service.build()
        finally:
            await rag.close()

    built = run(work())
    if as_json:
        print_json(built.to_json())
        return
    levels = ", ".join(f"level {level}: {count:,}" for level, count in enumerate(built.per_level)) or "none"
    console.print(
        f"{built.communities:,} communities ({levels}) over {built.things:,} things and "
        f"{built.facts_read:,} facts in {built.seconds:.2f} s; {built.removed:,} replaced"
    )
    for limit in built.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} ({limit.value:,})")


@app.command("list")
def list_communities(
    ontology: str | None = OntologyOption,
    limit: int = typer.Option(DEFAULT_LISTED_COMMUNITIES, "--limit", help="Communities listed (1 to 10,000)."),
    as_json: bool = typer.Option(False, "--json", help="Print the listing as JSON."),
) -> None:
    """The stored communities, coarsest level first."""
    rag, service = _service(ontology)

    async def work() -> CommunityListing:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            return await service.list(limit=limit)
        finally:
            await rag.close()

    listing = run(work())
    if as_json:
        print_json(listing.to_json())
        return
    table = Table("level", "id", "things", "facts", "parent")
    for community in listing.communities:
        table.add_row(
            str(community.level), community.id, f"{community.size:,}", f"{community.facts:,}", community.parent_id or ""
        )
    console.print(table)
    for reached in listing.limits_reached:
        console.print(f"[yellow]limit reached[/] {reached.name} ({reached.value:,})")
