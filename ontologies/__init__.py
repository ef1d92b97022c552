"""The shipped ontologies (generic, novel, article)."""
