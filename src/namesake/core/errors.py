"""One exception root; adapters translate third-party errors into these."""

from __future__ import annotations


class NamesakeError(Exception):
    """Root of every error namesake raises on purpose, with a stable machine code."""

    code = "NAMESAKE_ERROR"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class ConfigurationError(NamesakeError):
    """A setting or a local resource (model folder, data dir) cannot be used as given."""

    code = "CONFIGURATION"


class DimensionMismatchError(ConfigurationError):
    """A collection's vector size differs from the embedder's: writing would corrupt it."""

    code = "DIM_MISMATCH"

    def __init__(self, collection: str, expected: int, actual: int) -> None:
        super().__init__(
            f"DIM_MISMATCH: collection {collection!r} has dimension {actual}, the embedder produces {expected}"
        )
        self.collection, self.expected, self.actual = collection, expected, actual


class StoreError(NamesakeError):
    """A storage backend (PostgreSQL, Qdrant) failed; the operation did not complete."""

    code = "STORE_UNAVAILABLE"


class VectorStoreError(StoreError):
    """The vector store (Qdrant Edge or server) refused or failed an operation."""

    code = "VECTOR_STORE"


class StoreInUseError(VectorStoreError):
    """The embedded store's folder is held by another process: one process owns a data dir."""

    code = "STORE_IN_USE"


class CollectionNotFoundError(VectorStoreError):
    """The named collection does not exist."""

    code = "COLLECTION_NOT_FOUND"


class WorkerError(NamesakeError):
    """A worker process running the pipeline's pure stages died (killed, out of memory)."""

    code = "WORKER"


class EmbedderError(NamesakeError):
    """The embedding backend could not produce vectors."""

    code = "EMBEDDER"


class LLMError(NamesakeError):
    """The LLM provider failed; the pipeline carries on with its other signals."""

    code = "LLM"


class LLMRateLimitedError(LLMError):
    """The provider answered 429: no further calls in this run."""

    code = "LLM_RATE_LIMITED"


class LLMCoolingDownError(LLMRateLimitedError):
    """No call was sent: the provider is still waiting out an earlier 429."""


class LLMServerError(LLMError):
    """The provider answered 5xx, timed out or could not be reached."""

    code = "LLM_SERVER"


class LLMOutputError(LLMError):
    """The provider answered, but not with the JSON we asked for."""

    code = "LLM_OUTPUT"


class InvalidInputError(NamesakeError):
    """Caller input breaks a rule; the message names the field."""

    code = "INVALID_INPUT"


class InputTooLargeError(InvalidInputError):
    """Caller input exceeds a configured limit."""

    code = "TOO_LARGE"


class NotFoundError(NamesakeError):
    """The named object does not exist, or is not visible to this caller."""

    code = "NOT_FOUND"


class ConflictError(NamesakeError):
    """The request conflicts with the current state (impossible transition, job running)."""

    code = "CONFLICT"


class GoneError(ConflictError):
    """The user was erased while this request was in flight (or moments before): nothing was written."""

    code = "USER_ERASED"


class UnauthorizedError(NamesakeError):
    """No API key was presented."""

    code = "UNAUTHORIZED"


class ForbiddenError(NamesakeError):
    """The API key presented is not one of NAMESAKE_API_KEYS."""

    code = "FORBIDDEN"


class BusyError(NamesakeError):
    """Too many analyses are already waiting for the model: 503 with `Retry-After`, nothing was started."""

    code = "BUSY"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
