"""Checks whose node id changed, old id -> new id, so that `kcts diff` pairs a run from before a
rename with one from after it (a verdict that moved with its check is not "removed" plus "new").

Add a row when a check moves or is renamed; never remove one (an old results.json stays readable).
"""

from __future__ import annotations

_KIP1319 = "suites/kip1319/"
_CHOICE = _KIP1319 + "test_client_version_choice.py::"
_ERRORS = _KIP1319 + "test_client_error_handling.py::"

# The KIP-1319 client checks, one module per stack until 2026-11, then one test per promise
# parametrized by stack (issue 32: one shape per situation).
RENAMED: dict[str, str] = {
    _KIP1319 + "test_librdkafka.py::test_librdkafka_sends_txn_offset_commit_v6":
        _CHOICE + "test_client_commits_consumed_offsets_with_v6[librdkafka]",
    _KIP1319 + "test_java_client.py::test_java_client_commits_consumed_offsets_with_v6":
        _CHOICE + "test_client_commits_consumed_offsets_with_v6[java]",
    _KIP1319 + "test_franz_go.py::test_franz_go_commits_consumed_offsets_with_v6":
        _CHOICE + "test_client_commits_consumed_offsets_with_v6[franz-go]",
    _KIP1319 + "test_java_client.py::test_java_client_sends_v5_when_the_broker_advertises_v5":
        _CHOICE + "test_client_sends_v5_when_the_broker_advertises_v5[java]",
    _KIP1319 + "test_franz_go.py::test_franz_go_sends_v5_when_the_broker_advertises_v5":
        _CHOICE + "test_client_sends_v5_when_the_broker_advertises_v5[franz-go]",
    _KIP1319 + "test_java_client.py::test_java_client_falls_back_to_v5_for_the_whole_request_without_a_topic_id":
        _CHOICE + "test_client_falls_back_to_v5_for_the_whole_request_without_a_topic_id[java]",
    _KIP1319 + "test_franz_go.py::test_franz_go_falls_back_to_v5_without_a_topic_id":
        _CHOICE + "test_client_falls_back_to_v5_for_the_whole_request_without_a_topic_id[franz-go]",
    _KIP1319 + "test_java_client.py::test_java_client_retries_unknown_topic_id_then_commits":
        _ERRORS + "test_client_retries_unknown_topic_id_then_commits[java]",
    _KIP1319 + "test_franz_go.py::test_franz_go_retries_unknown_topic_id_then_commits":
        _ERRORS + "test_client_retries_unknown_topic_id_then_commits[franz-go]",
    _KIP1319 + "test_java_client.py::test_java_client_retries_a_mixed_answer_until_the_failed_topic_commits":
        _ERRORS + "test_client_maps_a_mixed_answer_to_its_topics_by_id[java]",
    _KIP1319 + "test_franz_go.py::test_franz_go_maps_a_mixed_answer_to_its_topics_by_id":
        _ERRORS + "test_client_maps_a_mixed_answer_to_its_topics_by_id[franz-go]",
    **{_KIP1319 + f"test_java_client.py::test_java_client_aborts_on_group_error[{error}]":
       _ERRORS + f"test_client_aborts_on_group_error[java-{error}]" for error in ("GROUP_ID_NOT_FOUND",
                                                                                  "STALE_MEMBER_EPOCH")},
    **{_KIP1319 + f"test_franz_go.py::test_franz_go_aborts_on_group_error[{error}]":
       _ERRORS + f"test_client_aborts_on_group_error[franz-go-{error}]" for error in ("GROUP_ID_NOT_FOUND",
                                                                                      "STALE_MEMBER_EPOCH")},
}


def current_id(nodeid: str, table: dict[str, str] = RENAMED) -> str:
    """The node id a check has now (following renames of renames); an id never renamed is itself."""
    seen = {nodeid}
    while nodeid in table:
        nodeid = table[nodeid]
        if nodeid in seen:
            raise ValueError(f"the rename table loops at {nodeid}")
        seen.add(nodeid)
    return nodeid
