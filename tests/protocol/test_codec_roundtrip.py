"""Every (api, version, direction) of the 4.4.0 specs: generated value -> encode -> decode -> same value and bytes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.protocol.codec import decode, encode
from harness.protocol.spec import MessageSpec, load_specs
from harness.protocol.strategies import message_values

SPECS = load_specs("4.4.0")

API_CASES = [
    pytest.param(api.key, direction, id=f"{api.name}-{direction}")
    for api in SPECS.apis()
    if not api.valid_versions.empty
    for direction in ("request", "response")
]
OTHER_CASES = [
    pytest.param(m.name, id=m.name)
    for m in sorted(SPECS.messages.values(), key=lambda m: m.name)
    if m.type not in ("request", "response") and not m.valid_versions.empty
]

SETTINGS = settings(
    max_examples=3,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _roundtrip_all_versions(spec: MessageSpec, data: st.DataObject) -> None:
    for version in spec.valid_versions:
        value = data.draw(message_values(spec, version), label=f"{spec.name} v{version}")
        raw = encode(spec, version, value, check_version=False)
        back = decode(spec, version, raw, check_version=False)
        assert back == value, f"{spec.name} v{version} decoded differently"
        assert encode(spec, version, back, check_version=False) == raw, f"{spec.name} v{version} re-encoded differently"


@pytest.mark.parametrize(("api_key", "direction"), API_CASES)
@SETTINGS
@given(data=st.data())
def test_api_roundtrip(api_key: int, direction: str, data: st.DataObject) -> None:
    api = SPECS.api(api_key)
    _roundtrip_all_versions(api.request if direction == "request" else api.response, data)


@pytest.mark.parametrize("name", OTHER_CASES)
@SETTINGS
@given(data=st.data())
def test_other_message_roundtrip(name: str, data: st.DataObject) -> None:
    _roundtrip_all_versions(SPECS.message(name), data)
