"""What the local backend does differently by release, 3.3 to 4.4 (harness.kafka.releases)."""

from __future__ import annotations

import pytest

from harness.kafka import releases


@pytest.mark.parametrize(("version", "mechanisms"), [
    ("3.3.2", ("PLAIN",)),
    ("3.4.1", ("PLAIN",)),
    ("3.5.2", ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")),  # KIP-900: SCRAM in KRaft
    ("4.4.0", ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")),
])
def test_scram_only_from_the_release_that_brought_it_to_kraft(version: str, mechanisms: tuple[str, ...]) -> None:
    assert releases.sasl_mechanisms(version) == mechanisms
