"""The reviewer's loop: the queue and a transcript as reviewed (`queue`); accept, edit, reject or fix by hand
(`service`), groups of one pair and undo (`reopen`)."""

from typing import TYPE_CHECKING

from namesake.core import lazy_names

if TYPE_CHECKING:
    from namesake.review.explain import AGAINST, MEASURED, REASONS, SOURCES, TYPE_WORDS
    from namesake.review.queue import QueueRows, ReviewQueue
    from namesake.review.reviewed import ReviewedTranscript, ReviewState, TextFormat, TimedSegment, as_reviewed, render
    from namesake.review.service import ReviewResult, ReviewService
    from namesake.review.unit_of_work import SqlReviewUnitOfWork

__all__ = [
    "AGAINST",
    "MEASURED",
    "REASONS",
    "SOURCES",
    "TYPE_WORDS",
    "QueueRows",
    "ReviewQueue",
    "ReviewResult",
    "ReviewService",
    "ReviewState",
    "ReviewedTranscript",
    "SqlReviewUnitOfWork",
    "TextFormat",
    "TimedSegment",
    "as_reviewed",
    "render",
]
__getattr__ = lazy_names(__name__, __file__)
