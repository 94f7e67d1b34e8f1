"""Kafka's wire protocol, driven by the JSON message specs inside the jars of the version under test.

    from harness.protocol import RawClient, load_specs

    specs = load_specs("4.4.0")                    # common/message/*.json of that version's jars
    specs.request("TxnOffsetCommit").valid_versions  # 0-6
    with RawClient.connect("127.0.0.1", 9092, spec=specs) as c:
        c.send("TxnOffsetCommit", 6, {...})          # a dict in, every field of the answer out

Modules: spec (loader), types (primitives), codec (compiled encoders/decoders, headers),
records (RecordBatch v2), coordinator (internal-topic records), client (raw client),
dump (readable text), errors (error codes), exceptions, strategies and kio_bridge (tests, bench).
"""

from harness.protocol.client import Exchange, RawClient
from harness.protocol.codec import (
    decode,
    decode_request,
    decode_response,
    encode,
    encode_request,
    encode_response,
)
from harness.protocol.dump import dump
from harness.protocol.exceptions import (
    DecodeError,
    EncodeError,
    ProtocolError,
    RequestTimeout,
    UnsupportedVersionError,
)
from harness.protocol.records import RecordBatch, WireRecord, encode_batch, parse_batches
from harness.protocol.spec import ApiSpec, MessageSpec, SpecSet, load_specs

__all__ = [
    "ApiSpec",
    "DecodeError",
    "EncodeError",
    "Exchange",
    "MessageSpec",
    "ProtocolError",
    "RawClient",
    "RecordBatch",
    "RequestTimeout",
    "SpecSet",
    "UnsupportedVersionError",
    "WireRecord",
    "decode",
    "decode_request",
    "decode_response",
    "dump",
    "encode",
    "encode_batch",
    "encode_request",
    "encode_response",
    "load_specs",
    "parse_batches",
]
