"""Root conftest: loads the kcts plugin (options, markers, reports) and the shared fixtures.

Options (see `pytest --help`, group "kcts"): --kafka-version, --brokers, --backend,
--bootstrap-servers, --reports-dir, --run-id. Markers: smoke, kip320, kip359, kip1094, kip1319,
integrity (the conformance areas), live and needs_fault_control.
"""

pytest_plugins = ["harness.pytest_plugin", "fixtures.cluster", "fixtures.topics", "fixtures.clients"]
