"""The error-code table, checked against the Errors enum of the kafka-clients jar itself."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.kafka.dist import resolve
from harness.protocol import errors

_DUMP_JAVA = """
import org.apache.kafka.common.protocol.Errors;
public class DumpErrors {
  public static void main(String[] a) {
    for (Errors e : Errors.values()) System.out.println(e.code() + " " + e.name());
  }
}
"""


def test_names_and_codes() -> None:
    assert errors.FENCED_LEADER_EPOCH == 74 and errors.UNKNOWN_LEADER_EPOCH == 75
    assert errors.UNKNOWN_TOPIC_ID == 100 and errors.NOT_LEADER_OR_FOLLOWER == 6
    assert errors.error_code("group_id_not_found") == errors.GROUP_ID_NOT_FOUND
    assert errors.error_name(113) == "STALE_MEMBER_EPOCH" and errors.error_name(9999) == "UNKNOWN(9999)"
    assert errors.describe(0) == "NONE(0)" and errors.is_retriable(6) and not errors.is_retriable(74 + 1000)
    assert str(errors.BY_CODE[74]) == "FENCED_LEADER_EPOCH(74)"
    with pytest.raises(KeyError):
        errors.error_code("NO_SUCH_ERROR")


@pytest.mark.skipif(shutil.which("java") is None, reason="needs java")
def test_table_matches_the_440_jar(tmp_path: Path) -> None:
    dist = resolve("4.4.0")
    source = tmp_path / "DumpErrors.java"
    source.write_text(_DUMP_JAVA)
    classpath = f"{dist.jar('kafka-clients')}:{dist.jar('slf4j-api')}"
    out = subprocess.run(["java", "-cp", classpath, str(source)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    from_jar = {int(code): name for code, name in (line.split() for line in out.stdout.splitlines())}
    assert from_jar == {code: e.name for code, e in errors.BY_CODE.items()}
