"""The workload's record format and histories, without Spark or a broker."""

from __future__ import annotations

import zlib

import pytest

from harness import verdicts
from harness.errors import KnownClientGap
from harness.integrity.model import TruncationWindow
from harness.integrity.run import reader_gap
from harness.workload import pipeline_record
from harness.workload.write_log import IdRange, TxnOutcome, WriteLog, merge_ranges


def test_a_record_survives_encoding_and_a_processor_changes_only_stage_and_flag() -> None:
    rec = pipeline_record.make(42, "k0007", 3)
    assert pipeline_record.decode(rec.encode()) == rec
    assert rec.crc == zlib.crc32(rec.payload.encode())
    copied = pipeline_record.decode(pipeline_record.rewrite_stage(rec.encode(), "py0>1", pipeline_record.ABORT))
    assert copied == rec.restage("py0>1", pipeline_record.ABORT)
    assert (copied.id, copied.key, copied.seq, copied.crc, copied.payload) == (42, "k0007", 3, rec.crc, rec.payload)
    assert pipeline_record.record_id(rec.encode()) == 42


@pytest.mark.parametrize("value", [b"", b"1,k,2", b"x,k,0,1,C,gen,p"])
def test_malformed_values_do_not_decode(value: bytes) -> None:
    with pytest.raises(ValueError):
        pipeline_record.decode(value)


def test_adjacent_ranges_of_one_outcome_merge_and_others_do_not() -> None:
    c, a = TxnOutcome.COMMITTED, TxnOutcome.ABORTED
    ranges = [IdRange(10, 20, c), IdRange(0, 10, c), IdRange(20, 25, a), IdRange(25, 30, c), IdRange(31, 40, c)]
    assert merge_ranges(ranges) == [IdRange(0, 20, c), IdRange(20, 25, a), IdRange(25, 30, c), IdRange(31, 40, c)]


def test_write_log_keeps_rows_in_order() -> None:
    log = WriteLog()
    log.extend([(1, "a", 0, 5), (2, "b", 1, 7)])
    log.extend([(3, "a", 2, 9)])
    assert log.rows() == [(1, "a", 0, 5), (2, "b", 1, 7), (3, "a", 2, 9)] and len(log) == 3


def test_a_truncation_window_is_half_open_and_per_partition() -> None:
    w = TruncationWindow("t", 1, 10, 20)
    assert ("t", 1, 10) in w and ("t", 1, 19) in w
    assert ("t", 1, 20) not in w and ("t", 0, 15) not in w and ("u", 1, 15) not in w


def test_the_reader_npe_on_a_null_eligible_leader_replicas_list_is_a_known_client_gap() -> None:
    """kafka-clients' DescribeTopicPartitions handling dereferences a field its schema declares nullable;
    a target that sends null (kfake) makes Spark's Kafka source fail, which is the reader's gap."""
    npe = RuntimeError(
        "An error occurred while calling o206.persist.\n: java.util.concurrent.ExecutionException: "
        'java.lang.NullPointerException: Cannot invoke "java.util.List.stream()" because the return value of '
        '"org.apache.kafka.common.message.DescribeTopicPartitionsResponseData$DescribeTopicPartitionsResponsePartition'
        '.eligibleLeaderReplicas()" is null'
    )
    with pytest.raises(KnownClientGap, match=r"kafka-clients .* EligibleLeaderReplicas") as raised:
        reader_gap(npe)
    with pytest.raises(pytest.xfail.Exception, match=r"KNOWN_CLIENT_GAP: kafka-clients .* EligibleLeaderReplicas"):
        verdicts.from_exception(raised.value)
    reader_gap(RuntimeError("java.lang.NullPointerException somewhere else"))  # not this gap: the caller re-raises
