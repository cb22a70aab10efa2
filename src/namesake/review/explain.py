"""What each stored signal says to a reviewer: the review page's "why", written once, on the server."""

from __future__ import annotations

from namesake.reliability import GAIN

# In the order a reviewer finds them telling: the page shows the first three present as "why".
REASONS: dict[str, str] = {
    "edge_form": "the rest of a name fixed beside it, as the name list writes it",
    "pieces": "one name heard in pieces, fixed whole",
    "remembered": "you fixed this before",
    "name_confirmed": "you fixed other words to this name before",
    "rewrites_canonical": "though the name list spells it as heard",
    "refused_as_often": "though you refused it as often as you made it",
    "disputed": "though you taught these words two different names",
    "refused": "though you refused it in another sentence",
    GAIN: "reads better in its sentence",
    "memory_bonus": "the memory backs it",
    "rag": "in the meeting's name list",
    "edit": "spelled almost the same",
    "phonetic": "sounds the same",
    "ctx_gain": "fits the words around it",
    "frequency": "said often in this meeting",
    "final_elsewhere": "written this way elsewhere here",
    "acronym": "an acronym",
    "capitalised": "capitalised like a name",
    "llm": "the LLM agrees",
    "asr": "the recogniser was unsure",
    "spoken_form": "the written form of what was said",
    "length": "a long name",
}
# Entity types in a reviewer's words (the stored names are the API's).
TYPE_WORDS: dict[str, str] = {
    "PERSON": "person", "ORG": "organisation", "LOCATION": "place", "ACRONYM": "acronym",
    "KEYWORD": "term", "DATE": "date", "TYPO": "misspelling",
}  # fmt: skip
# Where a suggestion came from, in a reviewer's words (CandidateSource's values).
SOURCES: dict[str, str] = {
    "rag": "the meeting's name list",
    "memory": "what you taught",
    "context_free": "letters said one by one",
    "manual": "your fix by hand",
}
# The one reason shown with its figure: how alike the spellings are, a percentage a reviewer can read. Every other
# signal is a score only the trees can weigh, said in words alone.
MEASURED: tuple[str, ...] = ("edit",)
# A signal below zero that argues against the suggestion, and how the page says so.
AGAINST: dict[str, str] = {
    GAIN: "reads better as heard",
    "ctx_gain": "the words around it fit what was heard",
}
