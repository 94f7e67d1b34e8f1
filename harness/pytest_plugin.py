"""The kcts pytest plugin: options, markers, the target, the run's report folder, verdicts, evidence,
progress and results.json, one module per job in harness/plugin/ (its __init__ lists them).

Loaded through the `pytest11` entry point (and by the root conftest.py when not installed); it
registers the modules below, as pytest registers a conftest's `pytest_plugins`. Every run writes
`reports/<run-id>/` with junit.xml, allure-results/, nodes/ (broker logs) and results.json, and
points `reports/latest` at it.
"""

import pytest

# The promises are judged by plain asserts in harness.checks, and a FAIL's reason is their message, with
# pytest's explanation where pytest rewrote the assert. It rewrote them only when it found kcts's
# distribution beside the current folder (the egg-info of a checkout, as the shards of `kcts run
# --shards` saw it) and not under the `kcts` script: one FAIL read two ways, sharded and serial.
pytest.register_assert_rewrite("harness.checks")

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
