"""The compose file and the image as written: probes that need no key, a non-root user, a health check."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_the_compose_file_is_valid_and_its_health_check_needs_no_key() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    api = compose["services"]["api"]
    probe = " ".join(api["healthcheck"]["test"])
    assert "/readyz" in probe and "Authorization" not in probe  # /readyz is open: a key would leak into the file
    for name, dep in api["depends_on"].items():
        assert dep["condition"] == "service_healthy" and "healthcheck" in compose["services"][name]
    assert set(compose["volumes"]) >= {"namesake-data", "postgres-data", "qdrant-data"}


def test_the_image_runs_as_a_non_root_user_with_a_health_check() -> None:
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK") for line in lines)
    assert lines.index(next(line for line in lines if line.startswith("USER "))) < lines.index(
        next(line for line in lines if line.startswith("CMD "))
    )
