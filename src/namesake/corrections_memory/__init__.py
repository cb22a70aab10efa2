"""Corrections memory: what a user corrected, remembered per user in Qdrant and mirrored in PostgreSQL."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.corrections_memory.bootstrap import CorrectionsMemoryBootstrap
    from namesake.corrections_memory.cleanup import CorrectionsMemoryCleanup, ErasureReceipt
    from namesake.corrections_memory.forget import ForgetReceipt, forget_correction
    from namesake.corrections_memory.left_alone import with_left_alone
    from namesake.corrections_memory.ports import MemoryRecords, Taught
    from namesake.corrections_memory.promotion import (
        CorrectionsMemoryPromotion,
        promoted_vocabulary,
        promoted_vocabulary_in,
    )
    from namesake.corrections_memory.reader import CorrectionsMemoryReader
    from namesake.corrections_memory.reconcile import CorrectionsMemoryReconciler
    from namesake.corrections_memory.records import SqlMemoryRecords
    from namesake.corrections_memory.refusals import (
        Refusal,
        forget_refusal,
        list_refusals,
        refused_pairs_in,
    )
    from namesake.corrections_memory.repository import (
        CorrectionState,
        active_corrections,
        active_corrections_in,
        list_corrections,
    )
    from namesake.corrections_memory.scope import default_scope, listed_values, memory_filter, split_by_scope
    from namesake.corrections_memory.service import CorrectionsMemoryService
    from namesake.corrections_memory.unteach import UnteachOutcome, unteach_in
    from namesake.corrections_memory.writer import (
        CorrectionInput,
        CorrectionsMemoryWriter,
        MemoryUnit,
    )

__all__ = [
    "CorrectionInput",
    "CorrectionState",
    "CorrectionsMemoryBootstrap",
    "CorrectionsMemoryCleanup",
    "CorrectionsMemoryPromotion",
    "CorrectionsMemoryReader",
    "CorrectionsMemoryReconciler",
    "CorrectionsMemoryService",
    "CorrectionsMemoryWriter",
    "ErasureReceipt",
    "ForgetReceipt",
    "MemoryRecords",
    "MemoryUnit",
    "Refusal",
    "SqlMemoryRecords",
    "Taught",
    "UnteachOutcome",
    "active_corrections",
    "active_corrections_in",
    "default_scope",
    "forget_correction",
    "forget_refusal",
    "list_corrections",
    "list_refusals",
    "listed_values",
    "memory_filter",
    "promoted_vocabulary",
    "promoted_vocabulary_in",
    "refused_pairs_in",
    "split_by_scope",
    "unteach_in",
    "with_left_alone",
]
__getattr__ = lazy_names(__name__, __file__)
