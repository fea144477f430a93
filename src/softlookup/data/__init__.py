"""Corpora: fetching, normalisation, subword model, batching."""
