"""The kcts pytest plugin, one module per job; `harness.pytest_plugin` registers them all.

- options: the kcts command-line options;
- markers: the markers, and the promise ids checks name, checked against the catalogue;
- target: the target under test, parsed once, and the client stacks the run judges;
- selection: which collected checks the run judges (by client stack);
- run_folder: reports/<run-id>/ and reports/latest;
- verdict_boundary: where refusals raised below pytest become verdicts, and FAIL is told from ERROR;
- client_leaks: a check that leaves a confluent-kafka client open fails;
- last_user: session clusters end after the last check that uses them (an idle cluster costs CPU);
- shard: `--shard I/N`, one part of the collected tests, dealt by module alike in every part;
- evidence: broker log excerpts, wire recordings and the event log of each check;
- allure_labels: epic, feature and story of each check;
- run_progress: the live progress line and progress.jsonl;
- results_file: results.json and the Allure environment.

Hooks of one kind in several modules are ordered by tryfirst/trylast where the order matters; each
says why.
"""
