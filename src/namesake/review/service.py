"""The reviewer's loop: accept / edit / reject a suggestion, or fix a span nothing suggested — and remember it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from namesake.core import ConflictError, InputTooLargeError, InvalidInputError, compact
from namesake.corrections_memory import CorrectionInput, default_scope
from namesake.domain import MemoryScope, ReviewAction, Suggestion, SuggestionStatus
from namesake.reliability import EDGE_FORM, completion, listed
from namesake.review.groups import GroupResult, check_group, pair_of
from namesake.review.matches import other_matches
from namesake.review.ports import ReviewUnitOfWork
from namesake.review.reopen import ReopenResult, reopen_in
from namesake.transcripts import ManualFix, PairReach, StoredSuggestion

# Which decisions each status allows; a repeat of the decision already taken is idempotent.
TRANSITIONS: dict[SuggestionStatus, set[str]] = {
    SuggestionStatus.PENDING: {ReviewAction.ACCEPT, ReviewAction.EDIT, ReviewAction.REJECT},
    SuggestionStatus.AUTO_APPLIED: {ReviewAction.ACCEPT, ReviewAction.EDIT, ReviewAction.REJECT},
    SuggestionStatus.VALIDATED: set(),
    SuggestionStatus.REJECTED: set(),
}
ACTION_STATUS = {ReviewAction.ACCEPT: SuggestionStatus.VALIDATED, ReviewAction.EDIT: SuggestionStatus.VALIDATED,
                 ReviewAction.REJECT: SuggestionStatus.REJECTED}  # fmt: skip


def check_transition(status: SuggestionStatus, action: ReviewAction, *, same_final: bool) -> bool:
    """True to apply, False for an idempotent repeat; ConflictError for an impossible transition."""
    if action in TRANSITIONS.get(status, set()):
        return True
    if ACTION_STATUS[action] == status and (action == ReviewAction.REJECT or same_final):
        return False
    raise ConflictError(f"cannot {action} a suggestion that is {status}", field="status")


@dataclass
class ReviewResult:
    """The suggestion after the decision, what the memory did (None for reject / repeat), where the lesson applies
    next, and the other places a fix by hand was applied to."""

    suggestion: Suggestion
    memory: str | None
    scope: MemoryScope | None = None
    also: list[Suggestion] = field(default_factory=list)


class ReviewService:
    """Applies review decisions to suggestions and records the corrections they teach."""

    def __init__(self, uow: ReviewUnitOfWork) -> None:
        self.uow = uow
        self.max_final_chars = uow.max_final_chars

    def _check_final(self, final: str) -> None:
        if len(final) > self.max_final_chars:
            raise InputTooLargeError(
                f"final has {len(final)} characters, the limit is {self.max_final_chars}: "
                "write the name, not a sentence",
                field="final",
            )

    def _load(self, suggestion_ids: list[str], transcript_id: str) -> list[StoredSuggestion]:
        with self.uow.begin() as unit:
            return unit.rows.load(check_group(suggestion_ids), transcript_id)

    def decide(
        self, *, suggestion_id: str, transcript_id: str, action: ReviewAction, final: str | None = None,
        entity_type: str | None = None, scope: MemoryScope | None = None,
    ) -> ReviewResult:  # fmt: skip
        """accept | edit (with final, and a type if it changes) | reject; status and memory in one transaction."""
        group = self.decide_group(suggestion_ids=[suggestion_id], transcript_id=transcript_id, action=action,
                                  final=final, entity_type=entity_type, scope=scope)  # fmt: skip
        return ReviewResult(group.suggestions[0], group.memory, group.scope)

    def decide_group(
        self, *, suggestion_ids: list[str], transcript_id: str, action: ReviewAction, final: str | None = None,
        entity_type: str | None = None, scope: MemoryScope | None = None,
    ) -> GroupResult:  # fmt: skip
        """One decision for every occurrence of an original → final pair: one memory write, counted once.

        A reject may name suggestions of different pairs (the page's "reject every folded one").

        Every member takes the decision or none does (409 names the one that cannot); a member already
        decided that way is an idempotent repeat.
        """
        if action not in ACTION_STATUS:
            raise InvalidInputError(f"unknown action {action!r}", field="action")
        if action == ReviewAction.EDIT and (final is None or not final.strip()):
            raise InvalidInputError("edit needs a non-empty final", field="final")
        if final is not None:
            self._check_final(final)
        if entity_type is not None and action != ReviewAction.EDIT:
            raise InvalidInputError("only an edit changes the entity type", field="entity_type")
        if scope is not None and action == ReviewAction.REJECT:
            raise InvalidInputError("a reject teaches nothing: it has no scope", field="scope")
        seen = self._load(suggestion_ids, transcript_id)
        lead = seen[0]
        # accept and edit teach one correction, so they take one pair; a reject teaches nothing and takes any
        if action != ReviewAction.REJECT and any(
            pair_of(x.original, x.final) != pair_of(lead.original, lead.final) for x in seen
        ):
            raise InvalidInputError("accept and edit decide one original → final pair at once", field="suggestion_ids")
        new_final = final.strip() if action == ReviewAction.EDIT and final else lead.final
        todo = [x for x in seen if check_transition(x.status, action, same_final=new_final == x.final)]
        if not todo:
            return GroupResult([x.suggestion for x in seen], None)

        def judge_race(status: SuggestionStatus, current_final: str) -> None:
            check_transition(status, action, same_final=new_final == current_final)

        status = ACTION_STATUS[action]
        done = {x.id: x.suggestion for x in seen}
        # accepting the list's own form of a word beside a fix (edge_forms) teaches nothing: it comes back with its
        # fix, and remembered alone "energy" → Energy would be proposed wherever the user says "energy"; nor does
        # accepting a symbol the pipeline wrote ("and" → &): the memory holds words, and has nothing to find it by
        teaches = action != ReviewAction.REJECT and not (
            action == ReviewAction.ACCEPT and all(is_edge_form(x) or not has_words(x) for x in todo)
        )
        ids = [str(x.id) for x in todo]
        if not teaches:
            with self.uow.begin() as unit:
                for x in todo:
                    done[x.id] = unit.rows.decide(x, status=status, final=new_final, on_race=judge_race)
                unit.log.log_decision(transcript_id, action=action, label=decision_label(todo, new_final),
                                       suggestion_ids=ids, scope=None)  # fmt: skip
            return GroupResult(list(done.values()), None)
        where = scope or self.default_scope(todo[0].original, new_final, transcript_id)
        prepared = self.uow.prepare(
            CorrectionInput(
                user_id=lead.user_id,
                entity_type=entity_type or lead.entity_type,
                original=todo[0].original,
                final=new_final,
                action=action,
                source_suggestion_id=str(todo[0].id),
                transcript_id=transcript_id,
                context=todo[0].context_phrase or None,
                scope=where,
            )
        )
        # the decisions and the one correction they teach commit together, or nothing does
        with self.uow.begin() as unit:
            memory = unit.memory.record(prepared)
            taught_type = prepared.entity_type
            for x in todo:
                done[x.id] = unit.rows.decide(x, status=status, final=new_final, on_race=judge_race,
                                              taught_with=todo[0].id, entity_type=taught_type)  # fmt: skip
            unit.log.log_decision(transcript_id, action=action, label=decision_label(todo, new_final),
                                   suggestion_ids=ids, scope=where)  # fmt: skip
        return GroupResult(list(done.values()), memory, where)

    def default_scope(self, original: str, final: str, transcript_id: str) -> MemoryScope:
        """Where a fix of `original` applies next when the reviewer does not say (everyday words: narrow)."""
        with self.uow.begin() as unit:
            return default_scope(original, final, unit.log.language_of(transcript_id))

    def reach(self, transcript_id: str, pairs: list[tuple[str, str]]) -> tuple[list[PairReach], int]:
        """What a decision on these pairs would touch, said before it is taken: places here and in other calls."""
        with self.uow.begin() as unit:
            return unit.log.reach(transcript_id, pairs)

    def history(self, transcript_id: str) -> list[dict[str, Any]]:
        """The transcript's decisions as taken, newest first, and whether each was taken back."""
        with self.uow.begin() as unit:
            return unit.log.history(transcript_id)

    def reopen(self, *, suggestion_ids: list[str], transcript_id: str) -> ReopenResult:
        """Undo decisions: each suggestion back as the pipeline left it, and what they taught taken back.

        A memory write is taken back once no decision that shares it is still standing; 409 when something
        newer depends on it. A manual fix has nothing to go back to: it is removed.
        """
        seen = self._load(suggestion_ids, transcript_id)
        with self.uow.begin() as unit:
            result = reopen_in(unit, seen)
            unit.log.log_undone(transcript_id, [str(x.id) for x in seen])
            return result

    def complete(
        self, *, suggestion_id: str, transcript_id: str, values: list[str], scope: MemoryScope | None = None
    ) -> ReviewResult:
        """A half fix made whole (`reliability.whole`): the wider span fixed by hand with the whole list value, the
        half displaced and, if the reviewer had accepted it, that decision and its lesson taken back, together."""
        (half,) = self._load([suggestion_id], transcript_id)
        s = half.suggestion
        with self.uow.begin() as unit:
            text = unit.log.segment_texts(transcript_id).get(s.segment_id, "")
        whole = None
        if half.status != SuggestionStatus.REJECTED:
            whole = completion(text, s.start_char, s.end_char, half.final, listed(values), s.original)
        if whole is None:
            raise InvalidInputError(
                f"“{half.original} → {half.final}” has no rest of a list value heard beside it to complete",
                field="suggestion_id",
            )
        fix = ManualFix(
            user_id=half.user_id, transcript_id=transcript_id, segment_id=s.segment_id, start_char=whole.start_char,
            end_char=whole.end_char, original=whole.original, final=whole.final, entity_type=half.entity_type,
            segment_text=text, scope=scope,
        )  # fmt: skip
        return self.manual_fix(fix, taking_back=[half] if half.status == SuggestionStatus.VALIDATED else [])

    def manual_fix(self, fix: ManualFix, taking_back: list[StoredSuggestion] | None = None) -> ReviewResult:
        """Record a correction for a span nothing suggested: its transcript, a validated suggestion and the
        memory write commit together, or nothing does (a retry of the same fix is a replay, counted once).

        `fix.also`: the other places of the transcript where the same words were heard ("replace all"): fixed in the
        same decision, one memory write, undone together. `taking_back`: accepted suggestions inside the span whose
        decisions are undone first, in the same transaction (a half fix made whole).
        """
        self._check_final(fix.final)
        with self.uow.begin() as unit:
            where = fix.scope or default_scope(fix.original, fix.final, unit.log.language_of(fix.transcript_id))
            others = other_matches(fix, fix.also, unit.log.segment_texts(fix.transcript_id)) if fix.also else []
        prepared = self.uow.prepare(
            CorrectionInput(
                user_id=fix.user_id,
                entity_type=fix.entity_type,
                original=fix.original,
                final=fix.final,
                action=ReviewAction.MANUAL,
                transcript_id=fix.transcript_id,
                segment_text=fix.segment_text,
                start_char=fix.start_char,
                end_char=fix.end_char,
                scope=where,
            )
        )
        with self.uow.begin() as unit:
            if taking_back:
                reopen_in(unit, taking_back)
            unit.memory.lock(prepared)
            # ownership first: nothing is remembered for a transcript not theirs (ConflictError)
            row = unit.rows.save_manual(fix, shares=bool(others))
            lead = uuid.UUID(row.id)
            rest = [unit.rows.save_manual(other, taught_with=lead, shares=True) for other in others]
            memory = unit.memory.record(prepared, source_suggestion_id=row.id)
            n = 1 + len(rest)
            unit.log.log_decision(fix.transcript_id, action=ReviewAction.MANUAL,
                                   label=f"{fix.original} → {fix.final}" + (f" ({n}×)" if n > 1 else ""),
                                   suggestion_ids=[row.id, *(r.id for r in rest)], scope=where)  # fmt: skip
        return ReviewResult(row, memory, where, rest)


def decision_label(todo: list[StoredSuggestion], final: str) -> str:
    """What the history calls a decision: its pair and how many places, or how many suggestions a reject took."""
    pairs = {pair_of(x.original, x.final) for x in todo}
    if len(pairs) > 1:
        return f"{len(todo)} suggestions"
    return f"{todo[0].original} → {final}" + (f" ({len(todo)}×)" if len(todo) > 1 else "")


def has_words(x: StoredSuggestion) -> bool:
    """A letter or digit on both sides of the pair, as a remembered correction needs (writer.validate_correction)."""
    return bool(compact(x.original) and compact(x.final))


def is_edge_form(x: StoredSuggestion) -> bool:
    """An edge word written as the list writes it beside a fix (reliability/edge_forms.py), as the pipeline left it."""
    return bool(x.suggestion.signals.get(EDGE_FORM))
