"""The learned memory policy: trees that say when a remembered fix may apply by itself, and what they read.

Off by default (`RELIABILITY_MEMORY_POLICY=rules`); the hand rules it stands in for, and every other bound on the
memory, are `memory_policy.py`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from namesake.domain import Candidate
from namesake.reliability.memory_policy import EVERYDAY, SAME_CONTEXT
from namesake.reliability.trees import TreeModel

# The learned policy's trees, as bench/fit/calibrate_memory.py writes them.
BUNDLED_MEMORY_MODEL = Path(__file__).with_name("memory_model.json")


@dataclass(frozen=True)
class LearnedPolicy:
    """The learned answer to "may this remembered fix apply by itself here?" and the bar it must clear."""

    model: TreeModel
    bar: float

    def applies(self, c: Candidate, evidence: float) -> bool:
        """Whether the remembered fix applies by itself here: past the guard, and likely right (policy_features)."""
        features = policy_features(c.audit(), evidence)
        if not may_apply_away(features):
            return False
        z = float(self.model.logits([features])[0])
        return 1.0 / (1.0 + math.exp(-z)) >= self.bar


def may_apply_away(features: dict[str, float]) -> bool:
    """Whether the learned policy may apply a fix by itself: an everyday original taught where the words around
    were not alike, only where the language model read it here — "great" → Greg taught twice is not for an
    unread "a great quarter" (a guard, not learned: the sessions rarely show it)."""
    if features["everyday"] < EVERYDAY or features["context"] >= SAME_CONTEXT:
        return True
    return features["read"] > 0


def policy_features(audit: dict[str, float], evidence: float) -> dict[str, float]:
    """What the learned policy reads of a memory-matched candidate: its stored signals (Candidate.audit) and
    the evidence of its other signals, before the memory's bonus.

    Age (`remembered_age_days`) is stored but not read: every simulated session is minutes old, so nothing
    could be learned from it; time is the expiry's business (`quarantine_until`, renewed by teaching).
    """
    ev = min(max(evidence, 1e-4), 1 - 1e-4)
    context = audit.get("remembered_context")
    return {
        "similarity": audit.get("remembered", 0.0),
        "times_taught": math.log1p(audit.get("remembered_frequency", 0.0)),
        "taught_by_hand": audit.get("remembered_manual", 0.0),
        "taught_by_edit": audit.get("remembered_edit", 0.0),
        "everyday": audit.get("remembered_everyday", 0.0),
        "context": -1.0 if context is None else context,
        "case_only": audit.get("case_only", 0.0),
        "evidence_logit": math.log(ev / (1 - ev)),
        "read": 1.0 if "lm_gain" in audit else 0.0,
        "lm_gain": audit.get("lm_gain", 0.0),
        "memory_score": audit.get("memory_score", 0.0),
    }
