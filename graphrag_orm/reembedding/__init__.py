"""Re-embedding as a reviewed plan: staged index, resumable backfill, cut-over, cleanup (issue 15)."""
