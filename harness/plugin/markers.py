"""The kcts markers, and the promise ids that checks name, held against the catalogue before anything runs."""

from __future__ import annotations

import pytest

from harness.areas import AREAS

MARKERS = {
    **{a.marker: a.description for a in AREAS},
    "live": "a harness test that needs a real cluster",
    "tansu": "a harness test of the Tansu target (skipped until its binary is built: tox -e vendor)",
    "docker": "a harness test that needs a Docker engine",
    "needs_fault_control": "needs to stop, kill or pause nodes of the target",
    "promise": "promise(id, ...): the promises of harness/promises.toml that the check judges",
    "same_defect_as": "same_defect_as(id, ...): when a check of that promise FAILs in the same run, this check's "
                      "FAIL is its consequence: one defect (harness/reporting/defects.py)",
    "client_axis": "its client parts run in the driver of the client version asked for (--librdkafka, "
                   "--java-clients, --go-client); other librdkafka checks run on the pinned confluent-kafka",
    "client_stack": "client_stack(name): the client stack a check judges, for checks without a client parameter",
    "heavy": "a long scene the gate leaves out (its area's own tox env runs it: tox -e partition, tox -e integrity)",
    "spark": "a harness test that runs Spark jobs (set on every test that uses the `spark` fixture); the gate leaves "
             "them to tox -e integrity",
}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


# tryfirst: every collected check is held against the catalogue, before harness.plugin.selection
# deselects those of stacks the run does not judge.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A check that names a promise the catalogue does not list is a usage error, before anything runs."""
    from harness.promises import CATALOGUE, catalogue

    known = catalogue()
    unknown = sorted({f"{item.nodeid}: {i}" for item in items for m in item.iter_markers("promise")
                      for i in m.args if i not in known})
    if unknown:
        raise pytest.UsageError(f"checks name promises that {CATALOGUE.name} does not list: {'; '.join(unknown[:5])}")
