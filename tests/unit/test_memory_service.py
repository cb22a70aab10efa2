"""The corrections memory service's rules on in-memory records: what the vocabulary carries and reads, what
forgetting and taking a refusal back leave."""

from __future__ import annotations

import pytest

from namesake.core.errors import NotFoundError
from namesake.corrections_memory.service import CorrectionsMemoryService
from tests.fakes.memory import FakeMemoryRecords, refusal

TAUGHT = [("gulp power", "Gulf Power", "ORG", 3), ("dane her", "Danaher", "ORG", 1)]


def test_the_vocabulary_carries_what_the_user_taught_and_promoted_and_reads_no_list_without_a_transcript() -> None:
    records = FakeMemoryRecords(taught_by={"ana": TAUGHT}, promoted_by={"ana": {"orgs": ["NextEra"]}},
                                lists={"t1": {"orgs": ["Acme"]}})  # fmt: skip
    body = CorrectionsMemoryService(records).vocabulary("ana", "json")
    terms = {t["term"]: t for t in body["terms"]}
    assert set(terms) == {"Gulf Power", "Danaher", "NextEra"}
    assert terms["Gulf Power"]["spellings"] == ["gulp power"] and terms["Gulf Power"]["frequency"] == 3
    assert next(t["term"] for t in body["terms"]) == "Gulf Power"  # taught most often first
    assert "canonical" not in records.reads


def test_with_a_transcript_the_vocabulary_carries_its_list_too() -> None:
    records = FakeMemoryRecords(taught_by={"ana": TAUGHT}, lists={"t1": {"orgs": ["Acme"]}})
    body = CorrectionsMemoryService(records).vocabulary("ana", "json", "t1")
    assert "Acme" in {t["term"] for t in body["terms"]} and "canonical" in records.reads


def test_a_forgotten_correction_leaves_the_vocabulary_and_another_users_stays() -> None:
    records = FakeMemoryRecords(taught_by={"ana": TAUGHT, "bo": TAUGHT[:1]})
    service = CorrectionsMemoryService(records)
    receipt = service.forget_correction("ana", 1)
    assert (receipt.original, receipt.final) == ("gulp power", "Gulf Power")
    assert [t["term"] for t in service.vocabulary("ana", "json")["terms"]] == ["Danaher"]
    assert [t["term"] for t in service.vocabulary("bo", "json")["terms"]] == ["Gulf Power"]
    with pytest.raises(NotFoundError):
        service.forget_correction("ana", 9)


def test_a_refusal_taken_back_no_longer_stands_and_one_not_refused_is_not_found() -> None:
    records = FakeMemoryRecords(refused={"ana": [refusal("covid", "COVID", day=1), refusal("done", "Don", 2, day=3)]})
    service = CorrectionsMemoryService(records)
    assert [r.original for r in service.refusals("ana")] == ["done", "covid"]  # last refused first
    assert service.forget_refusal("ana", "covid", "COVID").final == "COVID"
    assert [r.original for r in service.refusals("ana")] == ["done"]
    with pytest.raises(NotFoundError) as err:
        service.forget_refusal("ana", "covid", "COVID")
    assert err.value.field == "original"


def test_a_page_of_corrections_is_newest_first_below_the_id_given() -> None:
    records = FakeMemoryRecords(taught_by={"ana": [*TAUGHT, ("rash", "Rasche", "PERSON", 2)]})
    page = CorrectionsMemoryService(records).corrections("ana", limit=2, before=3)
    assert [r["id"] for r in page] == [2, 1]
