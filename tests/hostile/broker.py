"""A broker that misbehaves on purpose, one way per instance: what a broken or hostile target may send.

It speaks enough Kafka (from the codec, like tests/proxy/fake_broker.py) to get a client past the
point where the misbehaviour bites:
- `garbage`: every request is answered with an HTTP error page (its first 4 bytes read as a size of
  1.2 GB);
- `huge`: a frame length of 2 GB, then nothing;
- `truncated`: a frame length of 100, 10 bytes, then the connection closed;
- `wrong-correlation`: a well-formed answer under another correlation id;
- `wrong-version`: ApiVersions answered well; anything else with a body of the API's version 0;
- `slow`: every answer 30 s late (slow loris);
- `refuses-advertised`: ApiVersions offers Metadata v0-12; a Metadata request closes the connection;
- `ghosts`: Metadata names, besides itself, a broker at 127.0.0.1:1, where nothing listens;
- `self-loop`: every Metadata answer names one broker more, each of them at its own address (a
  cluster that points back at itself forever).
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Any

from harness.protocol.codec import decode_request, encode_response
from harness.protocol.exceptions import ProtocolError
from harness.protocol.spec import ApiSpec, SpecSet
from tests.proxy.fake_broker import FakeBroker

BEHAVIOURS = ("garbage", "huge", "truncated", "wrong-correlation", "wrong-version", "slow", "refuses-advertised",
              "ghosts", "self-loop")
LATE = 30.0
HTTP_PAGE = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
GHOST = ("127.0.0.1", 1)


class HostileBroker(FakeBroker):
    def __init__(self, specs: SpecSet, behaviour: str) -> None:
        assert behaviour in BEHAVIOURS, behaviour
        super().__init__(specs, 1)
        self.behaviour = behaviour
        self.stopping = threading.Event()
        self.peers = {1: self.address, **({7: GHOST} if behaviour == "ghosts" else {})}
        self.server.handle_error = lambda *_: None  # type: ignore[method-assign] # a client hanging up is no news

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        super().__exit__(*exc)

    def done(self) -> bool:
        return self.stopping.is_set()

    def respond(self, sock: socket.socket, frame: bytes) -> bool:
        api, version, cid, asked = self._request(frame)
        b = self.behaviour
        if b == "garbage":
            sock.sendall(HTTP_PAGE)
            return True
        if b == "huge":
            sock.sendall(struct.pack(">i", 2**31 - 1) + b"\0" * 16)
            return True
        if b == "truncated":
            sock.sendall(struct.pack(">i", 100) + b"\0" * 10)
            return False
        if b == "refuses-advertised" and api.key == 3:
            return False
        if b == "slow" and self.stopping.wait(LATE):
            return False
        if b == "self-loop" and api.key == 3:
            self.peers[max(self.peers) + 1] = self.address
        answer_version = 0 if b == "wrong-version" and api.key != 18 else version
        body = self.answer(api.key, answer_version, asked)
        header = {"CorrelationId": cid + 1000 if b == "wrong-correlation" else cid}
        out = encode_response(api, answer_version, header, body)
        sock.sendall(struct.pack(">i", len(out)) + out)
        return True

    def _request(self, frame: bytes) -> tuple[ApiSpec, int, int, dict[str, Any]]:
        """(api, version, correlation id, body); a body the codec will not read (librdkafka sends a few
        bytes more than the 4.4.0 schema in Metadata v12, which Apache Kafka ignores) is taken as empty."""
        key, version, cid = struct.unpack_from(">hhi", frame, 0)
        try:
            return self.specs.api(key), version, cid, decode_request(self.specs, frame).body
        except ProtocolError:
            return self.specs.api(key), version, cid, {}
