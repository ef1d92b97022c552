"""``graphrag-orm serve``: the HTTP endpoints and the explorer page (placeholder, being built)."""

from __future__ import annotations

__all__ = ["serve"]


def serve() -> None:
    """Serve the HTTP endpoints and the explorer page."""
    raise NotImplementedError
