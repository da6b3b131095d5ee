"""Corpus-wide near-duplicate clusters: jobs, the recompute, incremental updates, rows."""
