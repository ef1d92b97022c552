"""The shipped ontologies (generic, novel, article)."""

from . import article, generic, novel

__all__ = ["article", "generic", "novel"]
