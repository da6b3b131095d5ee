"""Folding a ranked list into near-duplicate groups: inputs, pools, the stream, the memo."""
