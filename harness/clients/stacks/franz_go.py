"""franz-go: kcts's drivers (harness/clients/go/, one binary `kcts-clients` with a subcommand per
role) built against a kgo release, on a plaintext listener.

By default the release harness/clients/go/go.mod pins. `--client-stack franz-go@VERSION` judges
another: the same driver source built against franz-go VERSION (its go.mod's requirement changed in
a copy, `go mod tidy` through the Go module proxy choosing the pkg/kmsg that release requires),
cached per version under the kcts cache. Where an older kgo lacks an API the drivers use, a build tag
selects a compatibility file of harness/clients/go/ (`compat_*.go`) that reports what that release
offers and nothing it does not (`SHIMS`). Releases v1.11.0 to v1.22.2 build; every role is driven
on each, so no role is lacking."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.version import Version

from harness import session
from harness.clients.driver import ClientDriver
from harness.clients.stacks.base import ClientStack, DriverRequest
from harness.clients.stacks.choice import GO, current
from harness.errors import SetupError
from harness.kafka.dist import cache_root
from harness.process.gobuild import ModulePin, go_binary

SOURCE = Path(__file__).resolve().parents[1] / "go"
MODULE = "github.com/twmb/franz-go"
KMSG = "github.com/twmb/franz-go/pkg/kmsg"  # released with kgo: each kgo release requires its own
RELEASE = re.compile(r"v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)")
# The build tags of harness/clients/go/compat_*.go, each for the releases before the one that brought
# the API its file stands in for.
SHIMS = (
    (Version("1.19.0"), "kgo_before_1_19"),  # ErrDataLoss.ResetToEpoch and ConsumedToEpoch
    (Version("1.21.0"), "kgo_before_1_21"),  # kmsg's OffsetFetch v10 (TopicID)
)


class FranzGo(ClientStack):
    name = GO
    no_reset = "none"
    producer_prefix = 9

    def roles(self) -> tuple[str, ...]:
        return ("consumers", "producer", "copier")

    def choose(self, version: str) -> None:
        """Any franz-go release (`v1.21.3` or `1.21.3`); it is built on first use."""
        release(version)

    def version(self) -> str:
        return f"franz-go {chosen() or module_version()}"

    def start(self, request: DriverRequest) -> ClientDriver:
        return ClientDriver(f"franz-go {request.role}", [str(binary(chosen())), f"-tag={session.current().marker}",
                                                         request.role, *request.args], request.log)


def release(version: str) -> str:
    """`version` as the Go module proxy names it (v1.21.3); a usage error when it is no release."""
    match = RELEASE.fullmatch(version.strip())
    if match is None:
        raise SetupError(f"--client-stack {GO}@{version}: not a franz-go release; give one such as "
                         f"{GO}@v1.21.3 (the versions of {MODULE} on the Go module proxy)")
    return f"v{match.group(1)}"


def chosen() -> str | None:
    """The release the run judges when it is not the pinned one (None: the pinned one)."""
    choice = current()
    if choice.only != GO or choice.version is None:
        return None
    version = release(choice.version)
    return None if version == module_version() else version


def module_version() -> str:
    """The franz-go version harness/clients/go/go.mod pins."""
    for line in (SOURCE / "go.mod").read_text().splitlines():
        if "github.com/twmb/franz-go " in line:
            return line.split()[-1]
    return "unknown"


def tags(version: str) -> tuple[str, ...]:
    """The compatibility files a build against `version` needs."""
    v = Version(RELEASE.fullmatch(version).group(1).split("-")[0])  # a pre-release counts as its release
    return tuple(tag for since, tag in SHIMS if v < since)


def binary(version: str | None = None) -> Path:
    """The drivers built against franz-go `version` (None: the pinned release)."""
    cache = cache_root() / "go-clients"
    if version is None or version == module_version():
        return go_binary(SOURCE, "kcts-clients", "the franz-go client drivers", cache)
    return go_binary(SOURCE, "kcts-clients", f"the franz-go {version} client drivers", cache,
                     pin=ModulePin(MODULE, version, drop=(KMSG,)), tags=tags(version))
