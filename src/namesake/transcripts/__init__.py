"""The transcripts store: transcript and suggestion rows, the canonical-entity collections, and retention.

Every SQL statement on the `transcripts` and `suggestions` tables lives in this package."""
