"""A stand-in broker on 127.0.0.1: answers ApiVersions, Metadata and TxnOffsetCommit from the codec.

The proxy's tests use it; the hostile targets' (tests/hostile/broker.py) and the raw client's
(tests/harness/test_fetch_wait.py, test_raw_reconnect.py) subclass it to answer more or to misbehave.

It knows of `peers` (node id -> address) and names them all in Metadata, like a real cluster; its
ClusterId is its own node id, so a test can tell which fake answered.
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
import uuid
from typing import Any

from harness.protocol.codec import decode_request, encode_response
from harness.protocol.spec import SpecSet

TOPIC = "fake-topic"
TOPIC_ID = uuid.UUID(int=0x1319)
ADVERTISED = {18: (0, 4), 3: (0, 12), 28: (0, 6), 10: (0, 6)}


class FakeBroker:
    def __init__(self, specs: SpecSet, node_id: int) -> None:
        self.specs = specs
        self.node_id = node_id
        self.peers: dict[int, tuple[str, int]] = {}
        broker = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                broker.serve(self.request)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address: tuple[str, int] = self.server.server_address[:2]  # type: ignore[assignment]
        # A short poll interval: shutdown() waits for the serve loop's next poll.
        self.thread = threading.Thread(
            target=self.server.serve_forever, args=(0.02,), name=f"fake-broker-{node_id}", daemon=True
        )

    def __enter__(self) -> FakeBroker:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def serve(self, sock: socket.socket) -> None:
        """Read frames until the client hangs up or `respond` says the connection is done."""
        while not self.done():
            size = _read(sock, 4)
            if size is None:
                return
            frame = _read(sock, struct.unpack(">i", size)[0])
            if frame is None or not self.respond(sock, frame):
                return

    def done(self) -> bool:
        return False

    def respond(self, sock: socket.socket, frame: bytes) -> bool:
        """Answer one request frame; False closes the connection."""
        request = decode_request(self.specs, frame)
        body = self.answer(request.api.key, request.version, request.body)
        header = {"CorrelationId": request.header["CorrelationId"]}
        out = encode_response(request.api, request.version, header, body)
        sock.sendall(struct.pack(">i", len(out)) + out)
        return True

    def answer(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key == 18:
            keys = [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, (lo, hi) in sorted(ADVERTISED.items())]
            return {"ErrorCode": 0, "ApiKeys": keys, "ThrottleTimeMs": 0}
        if key == 3:
            brokers = [{"NodeId": n, "Host": h, "Port": p, "Rack": None} for n, (h, p) in sorted(self.peers.items())]
            topic = {"ErrorCode": 0, "Name": TOPIC, "TopicId": TOPIC_ID, "IsInternal": False, "Partitions": []}
            return {"ThrottleTimeMs": 0, "Brokers": brokers, "ClusterId": f"fake-{self.node_id}",
                    "ControllerId": 1, "Topics": [topic]}
        if key == 28:
            topics = [
                {**({"TopicId": t["TopicId"]} if version >= 6 else {"Name": t["Name"]}),
                 "Partitions": [{"PartitionIndex": p["PartitionIndex"], "ErrorCode": 0} for p in t["Partitions"]]}
                for t in body["Topics"]
            ]
            return {"ThrottleTimeMs": 0, "Topics": topics}
        raise AssertionError(f"the fake broker does not answer api {key}")


def _read(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf
