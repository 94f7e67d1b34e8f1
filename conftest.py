"""Root conftest: loads the kcts plugin (options, markers, reports) and the shared fixtures.

Options (see `pytest --help`, group "kcts"): the target (--target, --target-profile, or --backend
with --kafka-version, --brokers, --bootstrap-servers and security), --java-clients, --reports-dir,
--run-id. Markers: the areas of harness/areas.py, live and needs_fault_control.
"""

pytest_plugins = [
    "harness.pytest_plugin", "fixtures.cluster", "fixtures.topics", "fixtures.clients", "fixtures.report",
    "fixtures.side_clusters",
]
