"""Reviewed schema migrations: revision files, one linear chain, a journal in the database.

A revision is a JSON file (``graphrag-orm-migration/1``) that names its own id
(``revision``), its predecessor (``down_revision``), the reviewed steps and a checksum
of them, so the chain is data, not convention. The database records each applied
revision in a small journal (``GraphRagMigration`` nodes). ``plan`` renders the exact
Cypher and changes nothing; ``status`` and ``check`` only read. Every statement goes
through the :class:`~graphrag_orm.store.Store` given to :class:`Migrator`.

The package, in Alembic's shape: :mod:`~graphrag_orm.migrate.revisions` (the files),
:mod:`~graphrag_orm.migrate.chain` (the chain and its one walk),
:mod:`~graphrag_orm.migrate.compare` (declared against live schema),
:mod:`~graphrag_orm.migrate.journal` (the journal nodes),
:mod:`~graphrag_orm.migrate.lock` (the migration lock, a lease that lets one process apply at a time),
:mod:`~graphrag_orm.migrate.runner` (:class:`Migrator`) and
:mod:`~graphrag_orm.migrate.autogenerate` (writing revisions).

Refusals (``MigrationError.code``): ``invalid-revision`` (a file that is not readable
UTF-8 JSON of this format, or holds a name, id, option or key the format does not allow:
checked when read, before any checksum), ``revision-too-large`` (a file over its byte or
step bound), ``chain-too-long`` (a folder over the revision bound), ``unreviewed-edit`` (a file whose checksum does not match
its steps), ``checksum-mismatch`` (an applied revision whose file changed),
``branched-chain`` (two revisions claim one predecessor), ``broken-chain`` (a
predecessor that does not exist, no root, or several), ``predecessor-not-head`` (the
database's head is not the revision's predecessor), ``unknown-revision`` (the journal
holds a revision the chain does not), ``equivalent-schema`` (an equivalent index or
constraint exists under another name: stop for review), ``schema-conflict`` (the name
exists with another definition, e.g. other vector dimensions), ``index-not-online`` (an
index did not come ONLINE within the bound), ``revision-exists`` (a file would be
overwritten), ``migration-in-progress`` (another process held the migration lock for
longer than the wait).
"""

from graphrag_orm.migrate.autogenerate import chain_for_embedding_set, initial_revision, next_revision, write_revision
from graphrag_orm.migrate.chain import Chain
from graphrag_orm.migrate.compare import (
    SchemaCheck,
    SchemaDifference,
    check_schema,
    check_vector_index,
    refuse_other_embedding_set,
)
from graphrag_orm.migrate.reports import ApplyReport, MigrationPlan, MigrationStatus, RevisionState
from graphrag_orm.migrate.revisions import Revision, checksum_of
from graphrag_orm.migrate.runner import Migrator
from graphrag_orm.store.introspection import read_live_schema

__all__ = [
    "ApplyReport",
    "Chain",
    "MigrationPlan",
    "MigrationStatus",
    "Migrator",
    "Revision",
    "RevisionState",
    "SchemaCheck",
    "SchemaDifference",
    "chain_for_embedding_set",
    "check_schema",
    "check_vector_index",
    "checksum_of",
    "initial_revision",
    "next_revision",
    "read_live_schema",
    "refuse_other_embedding_set",
    "write_revision",
]
