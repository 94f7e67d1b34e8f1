"""One container as a node the harness controls: start, stop, kill, pause, resume, cut off, reconnect.

Built on testcontainers' `DockerContainer` (creation, published ports, the network alias, the wait
strategy) and the Docker API for the rest: stop is `docker stop` (SIGTERM, then SIGKILL past the
timeout), kill is SIGKILL, pause is the cgroup freezer, and cutting a node off is disconnecting it
from the run's network (its published ports go with it: the node answers no one). A stopped
container keeps its file system, so a restart finds its data as a restarted process would.

Its output is followed into `log_path` on the host, so that reports and checks read node logs the
same way for every backend.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness.containers import cpu_class
from harness.errors import ClusterError, NodeExited
from harness.process.ports import LOOPBACK
from harness.process.service import LogFile, ProcessState
from harness.waiting import wait_until

if TYPE_CHECKING:
    from docker.models.containers import Container
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.network import Network

_said: set[str] = set()


def _say_once(text: str) -> None:
    if text not in _said:
        _said.add(text)
        print(text, file=sys.stderr, flush=True)


_STATES = {"running": ProcessState.RUNNING, "paused": ProcessState.PAUSED, "restarting": ProcessState.RUNNING}


class ContainerNode(LogFile):
    """A node in a container on `network`, reachable there as `alias`, and from this machine only
    on the ports in `published` (container port -> port on 127.0.0.1)."""

    def __init__(
        self, name: str, image: str, *, network: Network, alias: str, labels: dict[str, str], log_path: Path,
        env: dict[str, str] | None = None, published: dict[int, int] | None = None,
        command: list[str] | None = None, ready_log: str | None = None,
    ) -> None:
        self.name, self.image, self.network, self.alias = name, image, network, alias
        self.labels, self.log_path = labels, log_path
        self.env = env or {}
        self.published = published or {}
        self.command = command
        self.ready_log = ready_log
        self.isolated = False
        self.cpu_class: cpu_class.ClassSetting | None = None  # set when an idle-class runner started it
        self._tc: DockerContainer | None = None
        self._follower: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def container(self) -> Container:
        if self._tc is None:
            raise ClusterError(f"{self.name} was never started")
        return self._tc.get_wrapped_container()

    def start(self, timeout: float = 120.0) -> None:
        """Create and start the container (or start it again); return once its `ready_log` line shows."""
        if self._tc is None:
            self._create(timeout)
            return
        if self.state is ProcessState.PAUSED:
            self.resume()
        if self.state is ProcessState.RUNNING:
            return
        since = time.time()
        self.container.start()
        self._started(since, timeout)

    def _create(self, timeout: float) -> None:
        from testcontainers.core.container import DockerContainer

        tc = (DockerContainer(self.image, command=self.command, env=dict(self.env), name=self.name)
              .with_network(self.network).with_network_aliases(self.alias))
        for inner, outer in self.published.items():
            tc.ports[f"{inner}/tcp"] = (LOOPBACK, outer)  # type: ignore[assignment]
        tc.with_kwargs(labels=self.labels, hostname=self.alias, init=False, stop_signal="SIGTERM")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        since = time.time()
        try:
            tc.start()
        except Exception as exc:  # noqa: BLE001 - the engine's refusal, in kcts's words
            if tc._container is not None:
                self._tc = tc  # created but not started: remove() removes it
            raise ClusterError(f"{self.name}: the Docker engine would not start it: {explain(exc)}") from None
        self._tc = tc
        self._started(since, timeout)

    def _started(self, since: float, timeout: float) -> None:
        """Follow the log, put the container in the runner's class, then wait for its `ready_log`
        (here rather than in testcontainers' strategy, so that a JVM's start runs in that class too)."""
        self._follow(since)
        if cpu_class.runner_is_idle():
            self._into_idle_class()
        if self.ready_log:
            self._wait_log(timeout, since)

    def _into_idle_class(self) -> None:
        self.container.reload()  # the engine's answer to create holds no process yet
        pid = self.container.attrs["State"]["Pid"]
        if not pid:
            return  # it has already exited: no process to class, and its exit is what gets reported
        self.cpu_class = cpu_class.make_idle(pid)
        if not self.cpu_class.applied:
            _say_once(f"kcts: containers run at the normal CPU class, not the idle class of this run: "
                      f"{self.cpu_class.why}")

    def _wait_log(self, timeout: float, since: float) -> None:
        """The `ready_log` line, logged from `since` on, while the container runs."""
        pattern = re.compile(self.ready_log or "")

        def ready() -> bool:
            self.check_alive()
            return bool(pattern.search(self.docker_logs(since=since)))

        wait_until(ready, timeout, lambda: f"{self.name} never logged {self.ready_log!r}; last lines:\n"
                   f"{self.docker_logs(tail_lines=20)}", interval=0.2)

    def check_alive(self) -> None:
        """Raise `NodeExited`, with the container's last log lines, if it is not running."""
        c = self.container
        c.reload()
        if c.status in ("exited", "dead"):
            code = c.attrs.get("State", {}).get("ExitCode")
            raise NodeExited(f"{self.name} ({self.image}) exited with code {code}; its last log lines:\n"
                             f"{self.docker_logs(tail_lines=30)}")

    @property
    def state(self) -> ProcessState:
        if self._tc is None or self._tc._container is None:
            return ProcessState.STOPPED
        c = self.container
        c.reload()
        return _STATES.get(c.status, ProcessState.STOPPED)

    def stop(self, timeout: float = 20.0) -> None:
        """`docker stop`: SIGTERM (a broker's controlled shutdown), SIGKILL past `timeout`."""
        if self.state is ProcessState.PAUSED:
            self.resume()
        if self.state is ProcessState.RUNNING:
            self.container.stop(timeout=int(timeout))
            self._wait_state(ProcessState.STOPPED)

    def kill(self) -> None:
        if self.state is ProcessState.PAUSED:
            self.container.unpause()
        if self.state is ProcessState.RUNNING:
            self.container.kill()
            self._wait_state(ProcessState.STOPPED)

    def pause(self) -> None:
        if self.state is ProcessState.RUNNING:
            self.container.pause()
            self._wait_state(ProcessState.PAUSED)

    def resume(self) -> None:
        if self.state is ProcessState.PAUSED:
            self.container.unpause()
            self._wait_state(ProcessState.RUNNING)

    def isolate(self) -> None:
        """Cut the node off: out of the run's network, so it reaches no node and no client reaches it."""
        if not self.isolated:
            self.network._unwrap_network.disconnect(self.container, force=True)
            self.isolated = True

    def heal(self) -> None:
        if self.isolated:
            self.network.connect(self.container.id, network_aliases=[self.alias])
            self.isolated = False

    def remove(self) -> None:
        """Remove the container and its anonymous volumes, keeping what its log file holds."""
        if self._tc is not None and self._tc._container is not None:
            from docker.errors import NotFound

            try:
                self.container.remove(force=True, v=True)
            except NotFound:
                pass
        if self._follower is not None:
            self._follower.join(5)

    def _wait_state(self, want: ProcessState) -> None:
        wait_until(lambda: self.state is want, 30, lambda: f"{self.name} in state {self.state}, not {want}", 0.05)

    # -- logs ----------------------------------------------------------------------------------
    def _follow(self, since: float) -> None:
        """Append what the container prints from `since` on to `log_path`, until it stops."""
        container = self.container

        def run() -> None:
            try:
                stream = container.logs(stream=True, follow=True, since=since)
                with open(self.log_path, "ab", buffering=0) as out:
                    for chunk in stream:
                        out.write(chunk)
            except Exception:  # noqa: BLE001 - the container went away; its log ends there
                pass

        self._follower = threading.Thread(target=run, daemon=True, name=f"log {self.name}")
        self._follower.start()

    def docker_logs(self, tail_lines: int | None = None, since: float | None = None) -> str:
        """What the engine holds of the container's output (all of it, its last lines, or from `since`)."""
        try:
            raw = self.container.logs(tail=tail_lines if tail_lines is not None else "all", since=since)
        except Exception as exc:  # noqa: BLE001 - evidence only
            return f"<no logs: {exc}>"
        return raw.decode(errors="replace")


def explain(exc: BaseException) -> str:
    """The engine's words for a failed create or start, with the fix for the usual causes."""
    text = str(getattr(exc, "explanation", None) or exc)
    if "port is already allocated" in text or "address already in use" in text:
        return f"a host port it publishes is already taken ({text[:300]}); free that port or choose another"
    if "No such image" in text or ("not found" in text and "image" in text.lower()):
        return f"no such image ({text[:300]})"
    return text[:500]

