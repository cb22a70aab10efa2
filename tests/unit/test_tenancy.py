"""API keys and their scopes, and how a tenant's ids are stored apart from every other tenant's."""

from __future__ import annotations

import pytest

from namesake.core.errors import InvalidInputError
from namesake.core.settings import Settings, get_settings
from namesake.core.tenancy import Scope, key_scopes, tenant_of
from namesake.transcripts.canonical_index import SYSTEM_COLLECTIONS, collection_for, legacy_collection


def test_keys_are_bare_admin_or_tenant_scoped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAMESAKE_API_KEYS", "root, k1:admin, k2:tenant-acme,k3:tenant-beta-2")
    pairs = key_scopes(get_settings().namesake_api_keys)
    assert pairs == [("root", Scope()), ("k1", Scope()), ("k2", Scope("acme")), ("k3", Scope("beta-2"))]


@pytest.mark.parametrize("item", ["k:tenant-", "k:tenant-Acme", "k:owner", "k:tenant-a~b", ":admin"])
def test_a_bad_scope_refuses_to_start_without_showing_the_key(monkeypatch: pytest.MonkeyPatch, item: str) -> None:
    monkeypatch.setenv("NAMESAKE_API_KEYS", f"secret-one,{item}")
    with pytest.raises(ValueError) as err:
        get_settings()
    assert "secret-one" not in str(err.value)


def test_a_tenants_ids_are_prefixed_inward_and_stripped_outward() -> None:
    acme = Scope("acme")
    assert acme.inward("alice", "user_id") == "acme~alice" and acme.outward("acme~alice") == "alice"
    assert acme.user(None) == "acme~default" and Scope().user(None) is None  # no shared default user
    with pytest.raises(InvalidInputError) as err:
        acme.inward("beta~alice", "user_id")  # the prefix cannot be forged
    assert err.value.field == "user_id"
    body = {"transcript_id": "acme~t1", "items": [{"user_id": "acme~alice", "final": "acme~x"}]}
    assert acme.outward_json(body) == {"transcript_id": "t1", "items": [{"user_id": "alice", "final": "acme~x"}]}
    assert Scope().inward("acme~alice", "user_id") == "acme~alice"  # an admin names a tenant's user
    assert tenant_of("acme~alice") == "acme" and tenant_of("alice") == ""


def test_no_transcript_id_names_a_system_collection_or_another_transcripts() -> None:
    settings = Settings()
    ids = ["t1", "acme~t1", "beta~t1", "x" * 200, "x" * 199, *SYSTEM_COLLECTIONS]
    names = [collection_for(i, settings) for i in ids]
    assert len(set(names)) == len(ids) and not set(names) & SYSTEM_COLLECTIONS
    assert all(len(n) <= 200 for n in names) and "~" not in "".join(names)
    assert legacy_collection("acme~t1", settings) is None
