"""Which collected checks the run judges: those of the client stacks it was asked for."""

from __future__ import annotations

import pytest


def item_stack(item: pytest.Item) -> str | None:
    """The client stack a check judges: its `client` parameter, or its client_stack marker."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "client" in callspec.params:
        return str(callspec.params["client"])
    marker = item.get_closest_marker("client_stack")
    return str(marker.args[0]) if marker else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the checks of stacks the run does not judge (franz-go without --go-client; every
    other stack in a client-only run), and skip, with the reason, librdkafka checks that would run on
    the pinned confluent-kafka when another release was asked for."""
    from harness.clients import stacks

    choice = stacks.current()
    judged = choice.judged()
    keep, drop = [], []
    for item in items:
        stack = item_stack(item)
        wanted = stack in judged if stack is not None else choice.only is None
        (keep if wanted else drop).append(item)
        if (wanted and stack == stacks.LIBRDKAFKA and choice.librdkafka != stacks.PINNED_CONFLUENT_KAFKA
                and item.get_closest_marker("client_axis") is None):
            item.add_marker(pytest.mark.skip(reason=(
                f"runs librdkafka in the harness's own process, on the pinned confluent-kafka "
                f"{stacks.PINNED_CONFLUENT_KAFKA}, not the {choice.librdkafka} asked for; only client_axis checks "
                "run a driver of another release")))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
