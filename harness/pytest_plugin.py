"""The kcts pytest plugin: options, markers, the target, the run's report folder, verdicts, evidence,
progress and results.json, one module per job in harness/plugin/ (its __init__ lists them).

Loaded through the `pytest11` entry point (and by the root conftest.py when not installed); it
registers the modules below, as pytest registers a conftest's `pytest_plugins`. Every run writes
`reports/<run-id>/` with junit.xml, allure-results/, nodes/ (broker logs) and results.json, and
points `reports/latest` at it.
"""

# A module comes after those it imports: pytest rewrites the asserts of a plugin module only if it
# registers the module before anything imports it.
pytest_plugins = [
    "harness.plugin.options",
    "harness.plugin.markers",
    "harness.plugin.run_folder",
    "harness.plugin.target",
    "harness.plugin.selection",
    "harness.plugin.verdict_boundary",
    "harness.plugin.client_leaks",
    "harness.plugin.last_user",
    "harness.plugin.shard",
    "harness.plugin.evidence",
    "harness.plugin.allure_labels",
    "harness.plugin.results_file",
    "harness.plugin.run_progress",
]
