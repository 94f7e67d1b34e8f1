"""A target's fingerprint, as `results.json` records it: what it advertised, so that two runs (or two
matrix columns) can be known to be of the same target before their verdicts are compared.

The fingerprint is what the target says on the wire (ApiVersions ranges and feature levels, the
brokers Metadata names) plus the version string where the target tells one; its `digest` is a short
hash of all of it. Nothing secret goes in: no address, no credential.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.clients.raw import RawConnector
from harness.cluster.base import Cluster
from harness.errors import KctsError
from harness.protocol.exceptions import ProtocolError, SpecError


def take(cluster: Cluster) -> dict[str, Any]:
    """The running target's fingerprint; {"error": ...} (and no digest) when it would not answer."""
    try:
        with RawConnector(cluster) as raw:
            client = raw()
            answer = client.api_versions_response or client.negotiate()
            meta = client.send("Metadata", min(client.max_version("Metadata"), 12),
                               {"Topics": [], "AllowAutoTopicCreation": False})
            names = {}
            for key in client.broker_versions:
                try:
                    names[key] = client.specs.api(key).name
                except SpecError:
                    names[key] = f"ApiKey{key}"
    except (OSError, KctsError, ProtocolError) as exc:
        return {"error": f"the target did not answer ApiVersions and Metadata: {exc}"}
    apis = {names[k]: [lo, hi] for k, (lo, hi) in sorted(client.broker_versions.items())}
    features = {
        "supported": {f["Name"]: [f["MinVersion"], f["MaxVersion"]] for f in answer.get("SupportedFeatures") or []},
        "finalized": {f["Name"]: [f["MinVersionLevel"], f["MaxVersionLevel"]]
                      for f in answer.get("FinalizedFeatures") or []},
    }
    return with_digest({"version": cluster.version or None, "brokers": len(meta.get("Brokers") or []),
                        "api_versions": apis, "features": features})


def with_digest(fingerprint: dict[str, Any]) -> dict[str, Any]:
    """`fingerprint` with its `digest`: the first 12 hex digits of a SHA-256 over its canonical JSON."""
    body = {k: fingerprint.get(k) for k in ("version", "brokers", "api_versions", "features")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return {**body, "digest": hashlib.sha256(canonical.encode()).hexdigest()[:12]}


def short(fingerprint: dict[str, Any] | None) -> str:
    """One line: "4.4.0 · 3 brokers · 84 APIs · fp 1a2b3c4d5e6f" (or why there is none)."""
    if not fingerprint:
        return "no fingerprint"
    if "error" in fingerprint:
        return "no fingerprint (the target did not answer)"
    parts = [fingerprint.get("version") or "version not told", f"{fingerprint.get('brokers')} brokers",
             f"{len(fingerprint.get('api_versions') or {})} APIs", f"fp {fingerprint.get('digest')}"]
    return " · ".join(parts)
