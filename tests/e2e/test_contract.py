"""The contract is the test: schemathesis against a real server, every operation, a fixed seed.

Valid and invalid requests generated from the OpenAPI document; every answer must be a documented
status (with the documented content type) and none a server error.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from namesake.api.app import create_app
from namesake.core.settings import Settings
from tests.conftest import MakeRuntime, tuned
from tests.live import live_server

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import content_type_conformance, status_code_conformance  # noqa: E402

KEY = "contract-key"
TENANT_KEY = "contract-tenant-key"
# examples per operation and generation mode: bounded, so the whole run stays within a minute or two
EXAMPLES = 25


@pytest.fixture
def server(settings: Settings, make_runtime: MakeRuntime) -> Iterator[tuple[str, dict[str, object]]]:
    keys = [f"{KEY}:admin", f"{TENANT_KEY}:tenant-acme"]
    s = tuned(settings, namesake_api_keys=keys, max_request_bytes=200_000, max_segments=50)
    app = create_app(s, make_runtime(s))
    with live_server(app) as base:
        yield base, app.openapi()


@pytest.mark.parametrize("key", [KEY, TENANT_KEY], ids=["admin key", "tenant key"])
def test_every_operation_answers_only_documented_statuses_and_never_a_server_error(
    server: tuple[str, dict[str, object]], key: str
) -> None:
    base, document = server
    schema = schemathesis.openapi.from_dict(document)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    checks = [not_a_server_error, status_code_conformance, content_type_conformance]
    calls = {"n": 0}
    for operation in operations:
        modes = [schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE]
        strategy = st.one_of(*(operation.as_strategy(generation_mode=m) for m in modes))

        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(case=strategy)
        def run(case: schemathesis.Case) -> None:
            calls["n"] += 1
            headers = {"Authorization": f"Bearer {key}"}
            # a failure raises with the operation, the answer and a curl line to reproduce it
            case.call_and_validate(base_url=base, headers=headers, checks=checks, timeout=60)

        run()
    assert calls["n"] >= len(operations) * 5  # every operation was exercised
