"""Start-up check of the corrections collection: exists, right dimension, payload indexes present."""

from __future__ import annotations

from dataclasses import dataclass

from namesake.adapters import Embedder, IndexKind, VectorStore
from namesake.core import CORRECTIONS_COLLECTION, DimensionMismatchError, Settings

PAYLOAD_INDEXES: tuple[tuple[str, IndexKind, bool], ...] = (
    ("user_id", "keyword", True),  # tenant key: co-locates a user's points on a server
    ("entity_type", "keyword", False),
    ("quarantine_until", "integer", False),
    # every read filters on these too: without an index, each of the user's points has its payload read
    ("embedding_model", "keyword", False),
    ("promoted_to_canonical", "integer", False),
)


@dataclass
class BootstrapReport:
    """What ensure_collection had to do (nothing, on a second run)."""

    created: bool
    indexes_created: list[str]


class CorrectionsMemoryBootstrap:
    """Idempotent: run at every start-up; refuses a collection the embedder cannot write into."""

    def __init__(self, store: VectorStore, embedder: Embedder, settings: Settings) -> None:
        self.store, self.embedder, self.settings = store, embedder, settings

    def ensure_collection(self) -> BootstrapReport:
        """Create the collection and indexes if missing; DIM_MISMATCH names both dimensions otherwise."""
        configured = self.settings.reliability_corrections_memory_vector_dim
        if configured is not None and configured != self.embedder.dim:
            raise DimensionMismatchError(
                f"{CORRECTIONS_COLLECTION} (RELIABILITY_CORRECTIONS_MEMORY_VECTOR_DIM)",
                expected=self.embedder.dim,
                actual=configured,
            )
        created = self.store.ensure_collection(CORRECTIONS_COLLECTION, self.embedder.dim)
        made = [
            name
            for name, kind, tenant in PAYLOAD_INDEXES
            if self.store.ensure_payload_index(CORRECTIONS_COLLECTION, name, kind, tenant=tenant)
        ]
        return BootstrapReport(created, made)
