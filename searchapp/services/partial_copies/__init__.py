"""Partial copies: winnowing fingerprints, updates batch by batch or in bulk, jobs."""
