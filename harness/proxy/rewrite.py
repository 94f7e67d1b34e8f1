"""Broker addresses in responses, replaced by the proxy's own, so that clients never leave the proxy.

Which responses carry addresses is read from the spec, not from a list of API names: a response
at a version does when its top level has `Host`/`Port` (FindCoordinator v0-3) or an array of
structs that have them (Metadata and DescribeCluster `Brokers`, FindCoordinator v4+
`Coordinators`, the KIP-951 `NodeEndpoints` of Produce v10+ and Fetch v16+, ShareFetch ...).
A newer Kafka that adds such a field is covered without a change here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from harness.protocol.spec import ApiSpec, FieldSpec, StructSpec

Address = tuple[str, int]
Remap = Callable[[str, int], Address]
_ID_FIELDS = ("NodeId", "BrokerId")


def _has_address(s: StructSpec, version: int) -> bool:
    names = {f.name for f in s.fields if version in f.versions}
    return {"Host", "Port"} <= names


@cache
def address_fields(api: ApiSpec, version: int) -> tuple[str | None, ...]:
    """Top-level fields holding endpoints at this version; None stands for the top level itself."""
    top = api.response.struct
    found: list[str | None] = [None] if _has_address(top, version) else []
    for f in top.fields:
        if version in f.versions and _is_endpoint_array(f, version):
            found.append(f.name)
    return tuple(found)


def _is_endpoint_array(f: FieldSpec, version: int) -> bool:
    return f.type.is_array and f.struct is not None and _has_address(f.struct, version)


def endpoints(api: ApiSpec, version: int, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every struct of a decoded response that names a broker's host and port."""
    for name in address_fields(api, version):
        if name is None:
            yield body
        else:
            yield from body.get(name) or ()


def is_real_endpoint(entry: dict[str, Any]) -> bool:
    """FindCoordinator answers errors with node -1, host "" and port -1: nothing to rewrite."""
    node = next((entry[k] for k in _ID_FIELDS if k in entry), 0)
    return node >= 0 and bool(entry.get("Host")) and entry.get("Port", -1) >= 0


def rewrite_addresses(api: ApiSpec, version: int, body: dict[str, Any], remap: Remap) -> int:
    """Replace every broker endpoint in `body` with `remap(host, port)`; return how many changed."""
    changed = 0
    for entry in endpoints(api, version, body):
        if not is_real_endpoint(entry):
            continue
        new = remap(entry["Host"], entry["Port"])
        if new != (entry["Host"], entry["Port"]):
            entry["Host"], entry["Port"] = new
            changed += 1
    return changed
