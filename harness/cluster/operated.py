"""The operated backend: a cluster kcts does not start, whose brokers the operator's own commands
stop, kill, pause and cut off (`kind = "operated"`; the profile's format in
harness/cluster/operations.py, recipes in docs/recipes.md).

It is an external cluster (harness/cluster/external.py: reached at its bootstrap address, its
brokers learned from Metadata) with node control. Before any test, each broker the profile lists
must be in Metadata at the address the profile gives. kcts keeps each broker's state from what
its own commands did (a broker is running until kcts stops it), as the other backends know theirs,
and holds the Cluster interface's promises on top of the commands: a stopped or killed broker no
longer answers when `stop_node` returns, and a started or healed one is registered and unfenced
when `start_node` or `heal_node` returns (within `start_timeout`; else the target refused).

Nothing the commands do outlives the run: every fault in force is in the ledger (a file in the
session's root) with its undo command, rendered when the fault was made; the cluster's close undoes
them in order (heal, resume the controller, resume, start), and the session's reaper runs what is
left if the runner dies.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from harness import session
from harness.cluster import probe
from harness.cluster.backend import Backend
from harness.cluster.base import NodeState
from harness.cluster.external import ExternalCluster
from harness.cluster.kinds.operated import KIND  # the kind of target this module serves
from harness.cluster.model import TargetSpec
from harness.cluster.operations import (
    UNDO,
    Entry,
    Ledger,
    OperatedProfile,
    check_programs,
    ledger_path,
    load,
    refusal,
    run,
)
from harness.errors import ClusterError, FaultControlUnavailable, KctsError, SetupError, TargetRefused
from harness.network.links import LinkFault
from harness.waiting import Owed, wait_until

GONE_TIMEOUT = 30.0  # how long a broker may still answer after its stop or kill command returned


class OperatedCluster(ExternalCluster):
    def __init__(self, target: TargetSpec, log_dir: Path | None = None) -> None:
        super().__init__(target)
        self.profile: OperatedProfile = load(target)
        self.version = target.version or target.label
        self.log_dir = log_dir or session.current().scratch("operated") / "node-logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.operations_log = self.log_dir / "operations.log"
        self._reads = session.current().scratch("operated-logs") / "reads.log"
        self.ledger = Ledger(ledger_path(session.current().root, f"operated-{uuid.uuid4().hex[:8]}"),
                             self.operations_log)
        self._state: dict[int, NodeState] = {}
        self._isolated: set[int] = set()
        self._cuts: set[tuple[int, int]] = set()  # directed links cut: (from, to)
        self._controller_paused = False
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> OperatedCluster:
        """Reach the target (as an external one) and hold the profile's brokers against its Metadata."""
        super().start()
        self._check_nodes()
        self._state = dict.fromkeys(self.broker_ids, NodeState.RUNNING)
        return self

    def _check_nodes(self) -> None:
        where, listed = self.profile.where(), self._brokers
        named = self.profile.nodes
        if named and set(named) != set(listed):
            missing, unnamed = sorted(set(named) - set(listed)), sorted(set(listed) - set(named))
            parts = []
            if missing:
                parts.append(f"{', '.join(f'[nodes.{b}]' for b in missing)} name{'s' if len(missing) == 1 else ''} "
                             f"broker{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))}, which the "
                             "Metadata does not list (stopped? then start it; else fix the profile)")
            if unnamed:
                parts.append(f"the Metadata lists broker{'s' if len(unnamed) > 1 else ''} "
                             f"{', '.join(map(str, unnamed))}, which the profile has no [nodes.<id>] table for: "
                             "kcts could not act on it")
            raise SetupError(f"{where}: the brokers do not match the target's Metadata at {self.bootstrap_servers} "
                             f"(brokers {sorted(listed)}): {'; '.join(parts)}")
        for broker, values in sorted(named.items()):
            host, port = listed[broker]
            said = (values.get("host", host), int(values.get("port", port)))
            if said != (host, port):
                raise SetupError(f"{where}: [nodes.{broker}] says broker {broker} is at {said[0]}:{said[1]}, but the "
                                 f"target's Metadata advertises it at {host}:{port}: the commands would act on "
                                 "another broker than the one the checks read; fix the profile")

    def close(self) -> None:
        """Undo every fault still in force (in the ledger's order), then keep the brokers' logs as evidence."""
        if self._closed:
            return
        self._closed = True
        errors = []
        for entry in self.ledger.ordered():
            if not entry.sure:  # its own command failed: it may or may not be in force, so undone blind
                self._undo_blind(entry)
                continue
            try:
                self._undo(entry)
            except KctsError as exc:
                errors.append(str(exc).splitlines()[0])
        self._keep_logs()
        if errors:
            raise ClusterError(f"could not undo what kcts did to {self.target.label} (the ledger's undo commands are "
                               f"in {self.operations_log}): " + "; ".join(errors))

    def _undo(self, entry: Entry) -> None:
        if entry.undo == "mend":  # nothing to wait for: the close heals the rest, then resumes and starts
            self._undo_blind(entry)
            self._mark(entry.key, False)
            return
        broker = int(entry.key.split(":")[1]) if ":" in entry.key else None
        if broker is None:
            self.resume_controller()
        elif entry.undo == "heal":
            self.heal_node(broker)
        elif entry.undo == "resume":
            self.resume_node(broker)
        else:
            self.start_node(broker)
        if entry.key in self.ledger.entries:  # kcts's state had it undone already: the ledger is the word
            self._undo_blind(entry)

    def _undo_blind(self, entry: Entry) -> None:
        """Run an undo command whatever kcts thinks the broker's state is; its failure is no error (a
        resume of a broker that was never paused fails)."""
        run(entry.argv, entry.timeout, self.operations_log, entry.what)
        self.ledger.drop(entry.key)

    def _keep_logs(self) -> None:
        if not self.profile.has("logs"):
            return
        for broker in self.broker_ids:
            try:
                (self.log_dir / f"broker-{broker}.log").write_text(self._logs(broker))
            except (KctsError, OSError) as exc:
                with open(self.operations_log, "a") as log:
                    log.write(f"# broker {broker}'s log not kept: {str(exc).splitlines()[0]}\n")

    # -- evidence ----------------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        return {**super().environment(), "operated_profile": str(self.target.profile),
                "operations": ", ".join(self.profile.commands)}

    def log_paths(self) -> list[Path]:
        kept = sorted(self.log_dir.glob("broker-*.log"))
        return [self.operations_log, *kept] if self.operations_log.exists() else kept

    def node_log_size(self, broker_id: int) -> int:
        return len(self._logs(broker_id)) if self.profile.has("logs") else 0

    def node_log(self, broker_id: int, since: int = 0) -> str | None:
        """What the logs command prints, from the mark on (all of it if the log is now shorter: a
        pod that came back with a new log)."""
        if not self.profile.has("logs"):
            return None
        text = self._logs(broker_id)
        return text[since:] if since <= len(text) else text

    def _logs(self, broker: int) -> str:
        command = self.profile.commands["logs"]
        what = f"read broker {broker}'s log"
        # What it printed is the log itself, kept at the close (broker-<id>.log); a failed read's
        # output stays in scratch for its refusal.
        ran = run(command.argv(self._values(broker)), command.timeout, self._reads, what)
        if not ran.ok:
            raise refusal(what, ran, command.timeout, self._reads)
        self._reads.unlink(missing_ok=True)
        return ran.output

    # -- the commands --------------------------------------------------------------------------
    def _values(self, broker: int) -> dict[str, str]:
        host, port = self.broker_address(broker)
        return self.profile.node_values(broker, host, port, self.bootstrap_servers)

    def _broker(self, broker_id: int) -> int:
        if broker_id not in self._brokers:
            raise ClusterError(f"no broker {broker_id}; brokers are {self.broker_ids}")
        return broker_id

    def _do(self, operation: str, what: str, values: dict[str, str], key: str | None = None) -> None:
        """Run `operation`'s command; a fault it makes (`key`) is in the ledger before the command
        runs, with its undo, so that a runner killed meanwhile is undone too."""
        command = self.profile.commands[operation]
        if key is not None:
            undo = self.profile.commands[UNDO[operation]]
            self.ledger.put(Entry(key, f"undo '{what}'", undo.operation, undo.argv(values), undo.timeout,
                                  in_flight_until=time.time() + command.timeout))
            # In force from here on, as far as kcts knows: whatever ends the run now (a Ctrl-C while the
            # command runs or just after) finds the fault in kcts's state too, and undoes it.
            self._mark(key, True)
        ran = run(command.argv(values), command.timeout, self.operations_log, what,
                  started=None if key is None else lambda pid: self.ledger.flying(key, pid))
        if key is not None:
            self.ledger.settle(key, sure=ran.ok)
        if not ran.ok:
            if key is not None:
                # A fault half made (a pause that failed, a stop killed at its deadline) is undone at
                # once, blind, so that the next check finds the cluster whole; the ledger keeps it
                # for the close to undo once more, should it have taken effect after all.
                entry = self.ledger.entries[key]
                run(entry.argv, entry.timeout, self.operations_log, entry.what)
                self._mark(key, False)
            raise refusal(what, ran, command.timeout, self.operations_log)

    def _cleared(self, operation: str, what: str, values: dict[str, str], key: str) -> None:
        """Run an undoing operation; its fault leaves the ledger once the command succeeded."""
        self._do(operation, what, values)
        self.ledger.drop(key)
        self._mark(key, False)

    def _mark(self, key: str, on: bool) -> None:
        """kcts's state of a fault (a ledger key): in force, or not."""
        kind, _, broker = key.partition(":")
        if kind == "controller-paused":
            self._controller_paused = on
        elif kind == "isolated":
            (self._isolated.add if on else self._isolated.discard)(int(broker))
        elif kind == "cut":
            frm, _, to = broker.partition(">")
            (self._cuts.add if on else self._cuts.discard)((int(frm), int(to)))
        else:
            down = NodeState.STOPPED if kind == "stopped" else NodeState.PAUSED
            self._state[int(broker)] = down if on else NodeState.RUNNING

    # -- node control ------------------------------------------------------------------------
    def node_state(self, broker_id: int) -> NodeState:
        return self._state.get(self._broker(broker_id), NodeState.RUNNING)

    def start_node(self, broker_id: int) -> None:
        """Start a stopped broker; return once every running broker lists it (registered, unfenced)."""
        b = self._broker(broker_id)
        if self.node_state(b) is NodeState.PAUSED:
            self.resume_node(b)
        if self.node_state(b) is NodeState.RUNNING:
            return
        self._cleared("start", f"start broker {b}", self._values(b), f"stopped:{b}")
        self._wait_registered(f"broker {b} started")

    def stop_node(self, broker_id: int) -> None:
        self._down(broker_id, "stop")

    def kill_node(self, broker_id: int) -> None:
        self._down(broker_id, "kill")

    def _down(self, broker_id: int, operation: str) -> None:
        b = self._broker(broker_id)
        if self.node_state(b) is NodeState.PAUSED:  # as `docker stop` and `docker kill` do
            self.resume_node(b)
        if self.node_state(b) is not NodeState.RUNNING:
            return
        self._do(operation, f"{operation} broker {b}", self._values(b), f"stopped:{b}")
        if b not in self._isolated:
            self._wait_gone(b, operation)

    def pause_node(self, broker_id: int) -> None:
        b = self._broker(broker_id)
        if self.node_state(b) is not NodeState.RUNNING:
            return
        self._do("pause", f"pause broker {b}", self._values(b), f"paused:{b}")

    def resume_node(self, broker_id: int) -> None:
        b = self._broker(broker_id)
        if self.node_state(b) is not NodeState.PAUSED:
            return
        self._cleared("resume", f"resume broker {b}", self._values(b), f"paused:{b}")

    def isolate_node(self, broker_id: int) -> None:
        if not self.capabilities.partitions:
            super().isolate_node(broker_id)
            return
        b = self._broker(broker_id)
        if b in self._isolated:
            return
        self._do("isolate", f"cut broker {b} off the network", self._values(b), f"isolated:{b}")

    def heal_node(self, broker_id: int) -> None:
        """Reconnect; return once every running broker, this one included, lists every other again."""
        if not self.capabilities.partitions:
            super().heal_node(broker_id)
            return
        b = self._broker(broker_id)
        if b not in self._isolated:
            return
        self._cleared("heal", f"reconnect broker {b}", self._values(b), f"isolated:{b}")
        if self.node_state(b) is NodeState.RUNNING:
            self._wait_registered(f"broker {b} reconnected")

    def pause_controller(self) -> None:
        if not self.capabilities.controller:
            super().pause_controller()
            return
        if self._controller_paused:
            return
        self._do("pause_controller", "pause the controller", self.profile.controller_values(self.bootstrap_servers),
                 "controller-paused")

    def resume_controller(self) -> None:
        if not self.capabilities.controller:
            super().resume_controller()
            return
        if not self._controller_paused:
            return
        self._cleared("resume_controller", "resume the controller",
                      self.profile.controller_values(self.bootstrap_servers), "controller-paused")

    # -- links between nodes -----------------------------------------------------------------------
    @property
    def controller_ids(self) -> list[int]:
        cid = self.profile.controller_id
        return [cid] if self.capabilities.links and cid is not None else []

    def cut_links(self, faults: Iterable[LinkFault]) -> None:
        """The profile's cut command, once per directed link: `to` stops hearing `from`."""
        faults = list(faults)
        if not self.capabilities.links:
            super().cut_links(faults)
            return
        for f in faults:
            if f.loss != 100 or f.delay_ms:
                raise FaultControlUnavailable(self.target.label, f"a degraded link ({f}): an operated target's cut "
                                              "command drops a link whole")
        for f in faults:
            if (f.frm, f.to) not in self._cuts:
                self._do("cut", f"cut the link {f.frm}->{f.to}", self._link_values(f.frm, f.to), f"cut:{f.frm}>{f.to}")

    def heal_links(self) -> None:
        """The profile's mend command for every link cut; return once every running broker is registered."""
        if not self.capabilities.links:
            super().heal_links()
            return
        for frm, to in sorted(self._cuts):
            self._cleared("mend", f"let the link {frm}->{to} through", self._link_values(frm, to), f"cut:{frm}>{to}")
        self._wait_registered("links healed")

    def links_in_force(self) -> str:
        if not self.capabilities.links:
            return super().links_in_force()
        return ", ".join(f"{frm}->{to}" for frm, to in sorted(self._cuts)) or "none"

    def deaf_to_controller(self) -> set[int]:
        return {to for frm, to in self._cuts if frm in self.controller_ids}

    def _link_values(self, frm: int, to: int) -> dict[str, str]:
        return self.profile.link_values(self._end(frm), self._end(to), self.bootstrap_servers)

    def _end(self, node: int) -> dict[str, str]:
        if node in self.controller_ids:
            return {**self.profile.controller, "node": str(node)}
        return self._values(self._broker(node))

    # -- leaders ---------------------------------------------------------------------------------
    def move_leader_to(self, topic: str, partition: int, to: int) -> None:
        """The profile's move_leader command; its failure is the target refusing the move."""
        if not self.profile.has("move_leader"):
            super().move_leader_to(topic, partition, to)
            return
        self._do("move_leader", f"make broker {to} lead {topic}-{partition}", self._move_values(topic, partition, to))

    def elect_unclean_itself(self, topic: str, partition: int, to: int) -> bool:
        """The profile's unclean command where it has one (else ElectLeaders UNCLEAN: False)."""
        if not self.profile.has("unclean"):
            return False
        self._do("unclean", f"elect broker {to} uncleanly for {topic}-{partition}",
                 self._move_values(topic, partition, to))
        return True

    def _move_values(self, topic: str, partition: int, to: int) -> dict[str, str]:
        values = self._values(self._broker(to))
        return {**values, "topic": topic, "partition": str(partition), "to": str(to), "to_host": values["host"],
                "to_port": values["port"]}

    # -- the interface's promises on top of the commands ---------------------------------------
    def _wait_gone(self, broker: int, operation: str) -> None:
        """A stopped broker answers no one: its command returning is not enough where it only asked."""
        host, port = self.broker_address(broker)
        last: list[str] = ["it answered Metadata"]

        def gone() -> bool:
            try:
                probe.metadata(host, port, topics=[], timeout=2, transport=self.probe_transport(broker))
            except OSError as exc:
                last[0] = f"{exc.__class__.__name__}"
                return True
            return False

        wait_until(gone, GONE_TIMEOUT, lambda: f"broker {broker} still answers at {host}:{port} after the "
                   f"{operation} command returned ({last[0]})", interval=0.2, owed=Owed.PREMISE)

    def _wait_registered(self, what: str) -> None:
        running = [b for b in self.broker_ids if self._state.get(b) is NodeState.RUNNING and b not in self._isolated]
        try:
            self.state.wait_registered(running, self.profile.start_timeout, lambda: None, owed=Owed.PREMISE)
        except TargetRefused as exc:
            raise TargetRefused(f"{what}, but the brokers did not all register within "
                                f"{self.profile.start_timeout:.0f} s: {exc}") from None


def _prepare(target: TargetSpec) -> str:
    """Before any test: the profile parses, and every program its commands run is there."""
    profile = load(target)
    programs = check_programs(profile)
    caps = target.capabilities
    allowed = [name for name, on in (("stop, kill and pause brokers", caps.fault_control),
                                     ("cut them off the network", caps.partitions),
                                     ("cut single links between nodes", caps.links),
                                     ("pause the controller", caps.controller), ("read their logs", caps.node_logs))
               if on]
    return (f"operated target at {target.bootstrap}: the operator's commands ({', '.join(programs)}) "
            f"{'; '.join(allowed) or 'do nothing kcts needs to make faults'}")


BACKEND = Backend(kind=KIND, make=OperatedCluster, prepare=_prepare)
