"""Ingest: reading records, writing them in batches, bulk loads, uploads."""
