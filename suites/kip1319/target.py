"""What the broker under test advertises decides which KIP-1319 checks apply; never its version string."""

from __future__ import annotations

from harness import verdicts
from harness.protocol.client import RawClient

KIP_VERSION = 6  # TxnOffsetCommit v6 is KIP-1319
API = "TxnOffsetCommit"


def advertised(client: RawClient, api: str = API) -> tuple[int, int] | None:
    key = client.specs.api(api).key
    return client.broker_versions.get(key)


def describe_advertised(client: RawClient, api: str = API) -> str:
    found = advertised(client, api)
    where = f"{client.host}:{client.port}"
    return f"{where} advertises {api} v{found[0]}-{found[1]}" if found else f"{where} does not advertise {api}"


def require_v6(client: RawClient, what: str) -> None:
    """End the check as "not supported by this target" unless the broker advertises TxnOffsetCommit v6."""
    found = advertised(client)
    if found is None or found[1] < KIP_VERSION:
        verdicts.not_supported(f"{what} (TxnOffsetCommit v{KIP_VERSION}, KIP-1319)", describe_advertised(client))
