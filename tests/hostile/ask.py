"""One question to a hostile broker, in a process of its own so that its time and peak memory are its own.

    python -m tests.hostile.ask BEHAVIOUR raw|proxy

Starts tests.hostile.broker's HostileBroker (and, for `proxy`, kcts's protocol proxy in front of it),
connects kcts's raw client (ApiVersions), asks Metadata, and prints one JSON line: the error the
client raised ({"error": "Type: message"}, None when it was answered), the seconds it took, and
what the proxy noted.
"""

from __future__ import annotations

import json
import sys
import time

from harness.protocol.client import RawClient
from harness.protocol.exceptions import ProtocolError
from harness.protocol.spec import load_specs
from harness.proxy.server import Proxy
from tests.hostile.broker import HostileBroker

# The slow broker answers 30 s late; the others answer at once, but these processes run in the idle
# class in the gate, four at a time beside the conformance run, and a live answer may take seconds.
TIMEOUT = 5.0


def main(behaviour: str, via: str) -> None:
    specs = load_specs("4.4.0")
    out: dict[str, object] = {"error": None, "proxy_errors": []}
    start = time.monotonic()
    with HostileBroker(specs, behaviour) as broker:
        proxy = Proxy([broker.address], specs).start() if via == "proxy" else None
        address = broker.address if proxy is None else proxy.address_of(broker.address)
        try:
            with RawClient.connect(*address, spec=specs, timeout=TIMEOUT) as client:
                client.send("Metadata", 12, {"Topics": None, "AllowAutoTopicCreation": False})
        except ProtocolError as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            if proxy is not None:
                proxy.stop()
                out["proxy_errors"] = proxy.errors
    out["elapsed"] = round(time.monotonic() - start, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:3])
