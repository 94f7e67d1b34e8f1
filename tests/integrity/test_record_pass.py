"""The record pass's parser against the SQL one it replaces (`read.parse`), on well-formed and odd values."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest

from harness.integrity.read import parse
from harness.integrity.record_pass import crc32_rows, fields_at_separators, parse_values
from harness.workload import pipeline_record

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

GOOD = pipeline_record.make(7, "k3", 2).encode().decode()
ODD = [
    GOOD, pipeline_record.make(8, "k3", 3, flag=pipeline_record.ABORT).encode().decode(),
    "not a record", "", "1,k,2", "1,k,2,3,C", "1,k,2,3,C,gen", "a,k,2,3,C,gen,p", "1,k,2,3,X,gen,p",
    "1,k,2,3,C,gen,p,with,separators", "-5,k,2,3,C,gen,p", "+5,k,2,3,C,gen,p", " 6 ,k,2,3,C,gen,p",
    "99999999999999999999,k,2,3,C,gen,p", "1,,2,3,C,,p", "1,k,2,3,C,gen,", "1,kö,2,3,C,gén,pé", None,
]


@pytest.mark.parametrize("values", [
    pytest.param([v for v in ODD if v is not None and v.count(",") == 6], id="six-separators-each"),
    pytest.param(ODD, id="any"),
])
def test_the_arrow_parser_reads_every_value_as_the_sql_parser_does(spark: SparkSession, values: list[str]) -> None:
    """Every field, `parsed`, and crc32 of the payload agree with `read.parse` (Spark's split and
    try_cast) on each value, a null value and separators inside the payload included; values with
    six separators each take the numpy path, the others Arrow's split."""
    fast = fields_at_separators(pa.array(values, pa.string()))
    assert (fast is not None) == all(v is not None and v.count(",") == 6 for v in values)
    rows = [("t", 0, i, v) for i, v in enumerate(values)]
    sql = parse(spark.createDataFrame(rows, "topic string, partition int, offset bigint, raw string")).selectExpr(
        "offset", "id", "key", "seq", "crc", "flag", "stage", "parsed",
        "IF(payload IS NULL, 0, crc32(CAST(payload AS BINARY))) AS actual_crc").orderBy("offset").collect()
    got = parse_values(pa.array(values, pa.string()))
    for row in sql:
        i = row["offset"]
        mine = {
            "id": int(got["id"][i]) if got["has_id"][i] else None,
            "seq": int(got["seq"][i]) if got["has_seq"][i] else None,
            "crc": int(got["crc"][i]) if got["has_crc"][i] else None,
            "key": got["key"][i].as_py(), "stage": got["stage"][i].as_py(),
            "parsed": bool(got["parsed"][i]), "actual_crc": int(got["actual_crc"][i]),
        }
        theirs = {k: row[k] for k in mine}
        theirs["parsed"] = bool(theirs["parsed"])
        assert mine == theirs, f"value {values[i]!r}: arrow {mine}, sql {theirs}"


def test_the_crc_of_every_row_is_zlibs() -> None:
    """crc32_rows agrees with zlib.crc32 on payloads of one length (its table path, a slice of an
    array included), of an odd length, and of mixed lengths with a null (zlib's loop)."""
    same = [pipeline_record.payload_for(i).encode() for i in range(5000)]
    odd = [b"abc", b"xyz", b"123"]
    mixed = [b"a", None, b"hello", b""]
    for values in (same, odd, mixed):
        arr = pa.array(values, pa.binary())
        assert crc32_rows(arr).tolist() == [0 if v is None else zlib.crc32(v) for v in values]
    sliced = pa.array(same, pa.binary()).slice(7, 100)
    assert crc32_rows(sliced).tolist() == [zlib.crc32(v) for v in same[7:107]]
