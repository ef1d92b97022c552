"""HTTP endpoints with streamed, verified answers and the explorer page (extra ``server``)."""
