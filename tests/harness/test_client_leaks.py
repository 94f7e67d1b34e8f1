"""A check that leaves a confluent-kafka client open fails, naming where the client was made.

Clients are closed where they are made (harness.confluent context managers); the plugin
compares the clients open before a check's setup with those open after its teardown.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

CHECKS = '''
from harness import confluent

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "socket.connection.setup.timeout.ms": 1000}
HELD = []  # a reference that outlives the check, as a forgotten client would have


def test_leaves_a_producer_open():
    HELD.append(confluent.producer(UNREACHABLE))
    HELD[-1].__enter__()


def test_closes_its_producer():
    with confluent.producer(UNREACHABLE):
        pass


def test_a_session_admin_may_outlive_the_check():
    HELD.append(confluent.admin(UNREACHABLE, lasting=True))
    HELD[-1].__enter__()


def test_a_client_the_harness_makes_on_a_thread_beside_the_checks_is_not_the_checks():
    import threading

    opened = []

    def hold():
        with confluent.beside_the_checks():
            HELD.append(confluent.admin(UNREACHABLE))
            opened.append(HELD[-1].__enter__())

    made = threading.Thread(target=hold)
    made.start()
    made.join(10)
    assert opened, "the thread made no client"
'''


def test_a_check_that_leaves_a_client_open_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_leaky=CHECKS)
    result = pytester.runpytest_subprocess("--reports-dir", str(pytester.path / "reports"), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_leaves_a_producer_open*",
        "*the check left 1 client(s) open: Producer made at *test_leaky.py:9 (test_leaves_a_producer_open)*",
    ])


# Modules that run in a client's own process (the workload children, the client drivers) make their
# clients directly: a crash or a leak there ends that process, not the check.
OWN_PROCESS = {"harness/workload/generator.py", "harness/workload/processor.py", "harness/confluent.py",
               "harness/clients/drivers/kip320_consumers.py", "harness/clients/drivers/txn_commit.py",
               "harness/clients/drivers/producer.py"}
CONSTRUCTORS = {"Producer", "Consumer", "AdminClient"}


def test_in_process_clients_are_made_only_through_the_closing_factories() -> None:
    """A direct `Producer(...)` escapes the leak check above; only harness.confluent may construct one."""
    import ast
    from pathlib import Path

    from tests.harness import source_tree

    repo = Path(__file__).resolve().parents[2]
    direct = []
    for path in sorted(p for d in ("harness", "fixtures", "suites") for p in (repo / d).rglob("*.py")):
        rel = str(path.relative_to(repo))
        if rel in OWN_PROCESS:
            continue
        for node in source_tree.nodes(path):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if name in CONSTRUCTORS:
                    direct.append(f"{rel}:{node.lineno}: {name}(...)")
    assert not direct, "clients made outside harness.confluent (its context managers):\n  " + "\n  ".join(direct)
