"""The target under test, parsed once from the options, and the client stacks the run judges."""

from __future__ import annotations

import pytest

from harness.cluster.backend import Served
from harness.cluster.model import TargetSpec
from harness.cluster.target import target_from
from harness.errors import KctsError
from harness.plugin.run_folder import RUN_DIR_KEY, run_dir

TARGET_KEY = pytest.StashKey[Served]()


def served_target(config: pytest.Config) -> Served:
    """The run's target and its backend: the one `kcts run` parsed and prepared (a plugin object whose
    `kcts_served` it is, so the options are not parsed again), else parsed from the options on first
    use (a bad one is a usage error)."""
    if TARGET_KEY not in config.stash:
        given = [p.kcts_served for p in config.pluginmanager.get_plugins()
                 if isinstance(getattr(p, "kcts_served", None), Served)]
        try:
            config.stash[TARGET_KEY] = given[0] if given else target_from(config.option)
        except KctsError as exc:
            raise pytest.UsageError(str(exc)) from None
    return config.stash[TARGET_KEY]


def target_spec(config: pytest.Config) -> TargetSpec:
    """The run's target."""
    return served_target(config).spec


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    served_target(config)
    from harness.clients import stacks

    opt = config.option
    stacks.configure(stacks.ClientChoice.parse(opt.librdkafka, opt.go_client, opt.client_stack))


def pytest_report_header(config: pytest.Config) -> list[str]:
    if RUN_DIR_KEY not in config.stash:
        return []
    spec = target_spec(config)
    return [f"kcts: target={spec.label} ({spec.kind}) java-clients={spec.java_clients} reports={run_dir(config)}"]
