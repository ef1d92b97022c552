"""The toolkit's own reviewed schema revisions (see graphrag_orm.migrate)."""
