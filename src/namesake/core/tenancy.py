"""Tenants: which data an API key may touch, and how a tenant's ids are kept apart from every other's.

A tenant key names its users and transcripts as it likes (`alice`, `call-42`); inside namesake they are
stored as `TENANT~alice`, so tenant B's `alice` is another user than tenant A's, and nothing a tenant
sends can name another tenant's rows, points or collections. `~` is not allowed in a tenant's ids, so
the prefix cannot be forged. An admin key works in the default namespace (ids without `~`, the data of
a deployment without tenants) and names a tenant's data explicitly as `TENANT~id`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from namesake.core.errors import InvalidInputError

SEPARATOR = "~"
DEFAULT_USER = "default"  # whose transcript it is when the caller names no user
TENANT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
ADMIN = "admin"
TENANT_SCOPE = "tenant-"
# keys of a JSON body whose values are ids a tenant sent (and must get back as sent)
ID_FIELDS = frozenset({"user_id", "transcript_id"})
J = TypeVar("J")


@dataclass(frozen=True)
class Scope:
    """What a request may touch: everything (tenant None, an admin key) or one tenant's namespace."""

    tenant: str | None = None

    @property
    def is_admin(self) -> bool:
        """Admin keys run jobs and may name any tenant's data as TENANT~id."""
        return self.tenant is None

    def inward(self, value: str, field: str) -> str:
        """The stored id of an id the client sent; a tenant key may not use the separator."""
        if self.tenant is None:
            return value
        if SEPARATOR in value:
            raise InvalidInputError(f"{field}: '{SEPARATOR}' is reserved for tenant names", field=field)
        return f"{self.tenant}{SEPARATOR}{value}"

    def user(self, value: str | None) -> str | None:
        """The stored user id; a tenant's unnamed user is its own `default`, never the shared one."""
        if value is None and self.tenant is None:
            return None
        return self.inward(value or DEFAULT_USER, "user_id")

    def outward(self, value: str) -> str:
        """The id as this client named it."""
        prefix = f"{self.tenant}{SEPARATOR}"
        return value[len(prefix) :] if self.tenant is not None and value.startswith(prefix) else value

    def outward_json(self, obj: J) -> J:
        """A response body with every user_id / transcript_id as the client named it (same shape back)."""
        return cast(J, self._outward_any(obj))

    def _outward_any(self, obj: Any) -> Any:
        if self.tenant is None:
            return obj
        if isinstance(obj, dict):
            return {
                k: self.outward(v) if k in ID_FIELDS and isinstance(v, str) else self._outward_any(v)
                for k, v in obj.items()
            }
        if isinstance(obj, list):
            return [self._outward_any(v) for v in obj]
        return obj

    def outward_text(self, message: str) -> str:
        """An error message without this tenant's prefix (it names ids the client sent)."""
        return message if self.tenant is None else message.replace(f"{self.tenant}{SEPARATOR}", "")


def tenant_of(stored_id: str) -> str:
    """The tenant a stored id belongs to ('' for the default namespace)."""
    head, sep, _ = stored_id.partition(SEPARATOR)
    return head if sep else ""


def parse_key(item: str) -> tuple[str, Scope]:
    """One `KEY` (admin), `KEY:admin` or `KEY:tenant-NAME` item of NAMESAKE_API_KEYS."""
    key, sep, scope = item.rpartition(":")
    if not sep:
        return item, Scope()
    if not key:
        raise ValueError("an API key is empty")
    if scope == ADMIN:
        return key, Scope()
    name = scope[len(TENANT_SCOPE) :] if scope.startswith(TENANT_SCOPE) else None
    if name is None or not TENANT_NAME.match(name):
        raise ValueError(
            f"scope {scope!r} of an API key is neither 'admin' nor 'tenant-NAME' "
            "(NAME: lowercase letters, digits and '-', at most 32)"
        )
    return key, Scope(name)


def key_scopes(items: list[str]) -> list[tuple[str, Scope]]:
    """Every configured key with its scope; ValueError names the first bad item (never the key itself)."""
    pairs = [parse_key(i) for i in items]
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("the same API key is listed twice")
    return pairs
