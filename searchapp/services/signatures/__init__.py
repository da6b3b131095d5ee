"""Signatures: versioned sets, signing, band keys, rebuild jobs."""
