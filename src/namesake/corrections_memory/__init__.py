"""Corrections memory: what a user corrected, remembered per user in Qdrant and mirrored in PostgreSQL."""
