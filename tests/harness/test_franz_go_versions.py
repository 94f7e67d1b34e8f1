"""franz-go at a release of the run's choosing (`--client-stack franz-go@VERSION`): the release named,
the compatibility files an older kgo needs, and the drivers built against it through the module proxy."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from harness.clients import stacks
from harness.clients.stacks import franz_go
from harness.errors import SetupError


@pytest.fixture
def choice() -> Iterator[None]:
    yield
    stacks.configure(stacks.ClientChoice())


@pytest.mark.parametrize(("given", "release"), [("v1.21.3", "v1.21.3"), ("1.17.0", "v1.17.0"),
                                                ("v1.22.0-rc.1", "v1.22.0-rc.1")])
def test_a_release_is_named_as_the_module_proxy_names_it(given: str, release: str) -> None:
    assert franz_go.release(given) == release


@pytest.mark.parametrize("given", ["latest", "v1.21", "master", "v1.21.3;rm"])
def test_what_is_no_release_is_refused(given: str) -> None:
    with pytest.raises(SetupError, match="not a franz-go release"):
        franz_go.release(given)


@pytest.mark.parametrize(("release", "tags"), [
    ("v1.17.0", ("kgo_before_1_19", "kgo_before_1_21")), ("v1.20.7", ("kgo_before_1_21",)),
    ("v1.21.0", ()), ("v1.22.2", ()), ("v1.21.0-rc.1", ()),
])
def test_an_older_kgo_builds_with_the_compatibility_files_of_what_it_lacks(release: str, tags: tuple[str, ...]) -> None:
    assert franz_go.tags(release) == tags


def test_the_run_judges_the_release_it_chose_and_names_it(choice: None) -> None:
    stacks.configure(stacks.ClientChoice.parse(None, False, "franz-go@1.21.3"))
    assert franz_go.chosen() == "v1.21.3"
    assert stacks.get(stacks.GO).version() == "franz-go v1.21.3"
    stacks.configure(stacks.ClientChoice.parse(None, False, f"franz-go@{franz_go.module_version()}"))
    assert franz_go.chosen() is None, "the pinned release is the pinned build"
    stacks.configure(stacks.ClientChoice.parse(None, True, None))
    assert stacks.get(stacks.GO).version() == f"franz-go {franz_go.module_version()}"


def test_a_bad_release_is_refused_when_the_run_is_configured(choice: None) -> None:
    with pytest.raises(SetupError, match="franz-go@latest: not a franz-go release"):
        stacks.configure(stacks.ClientChoice.parse(None, False, "franz-go@latest"))


@pytest.mark.heavy  # the replay env builds older releases, never the gate (the Go module proxy, or its cache)
@pytest.mark.live
def test_the_drivers_build_against_an_older_kgo_and_report_it() -> None:
    """Through the Go module proxy on first use (then cached per release): v1.17.0 lacks ErrDataLoss's
    epochs and OffsetFetch v10, which its compatibility files stand in for."""
    binary = franz_go.binary("v1.17.0")
    out = subprocess.run([str(binary), "version"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "v1.17.0", out.stderr
    assert franz_go.binary("v1.17.0") == binary != franz_go.binary(), "one cache entry per release"
