"""The proxy: one loopback port per broker, run by an event loop in a background thread.

    with Proxy.for_cluster(cluster) as proxy:
        producer = Producer(proxy.client_config())
        rule = proxy.add(ReplaceErrors("TxnOffsetCommit", error=100, count=2, versions=(6, 6)))
        ...
        assert rule.fired == 2, proxy.recording.summary("TxnOffsetCommit")

Guarantees:
- Once `start()` (or `__enter__`) returns, every listener accepts connections.
- Clients stay behind the proxy: every broker address in a response is replaced by the address of
  the proxy port in front of it; a broker that was not known when the proxy started gets a port
  the first time a response names it.
- Rules take effect for the next frame after `add()` returns, and stop after `remove()` returns.
- `stop()` (or `__exit__`) closes every connection and listener and joins the thread; calling it
  twice does nothing. Errors the proxy met while running are kept in `errors`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from harness.errors import KctsError
from harness.protocol.auth import tls_from_client_config, without_tls
from harness.protocol.spec import SpecSet, load_specs
from harness.proxy.connection import STREAM_LIMIT, Link
from harness.proxy.recorder import Recording
from harness.proxy.rules import Rule

if TYPE_CHECKING:
    from harness.cluster.base import Cluster

# The proxy never listens beyond the loopback interface.
BIND_HOST = "127.0.0.1"
R = TypeVar("R", bound=Rule)
T = TypeVar("T")


class ProxyError(KctsError):
    """The proxy could not start, or met errors while it ran."""


class Proxy:
    def __init__(
        self,
        upstreams: Iterable[tuple[str, int]],
        specs: SpecSet | str,
        *,
        labels: dict[tuple[str, int], str] | None = None,
        base_config: dict[str, str] | None = None,
        keep_body_bytes: int = 64 * 1024,
    ) -> None:
        self.specs = load_specs(specs)
        self.upstreams = list(upstreams)
        self.labels = dict(labels or {})
        # The proxy holds any TLS session to the brokers itself, so that it reads every frame; its
        # clients speak to it over plaintext on loopback, with the rest of the target's settings.
        self.upstream_tls = tls_from_client_config(base_config or {})
        self.base_config = without_tls(base_config or {})
        self.recording = Recording(self.specs, keep_body_bytes)
        self.errors: list[str] = []
        self.unreachable: list[str] = []  # client connections refused because the broker was down
        self.rules: tuple[Rule, ...] = ()
        self._rules_lock = threading.Lock()
        self._listeners: dict[tuple[str, int], tuple[asyncio.Server, tuple[str, int]]] = {}
        self._listener_lock: asyncio.Lock | None = None
        self._links: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    @classmethod
    def for_cluster(
        cls, cluster: Cluster, specs: SpecSet | str | None = None, keep_body_bytes: int = 64 * 1024
    ) -> Proxy:
        """A proxy in front of every broker's client listener, speaking the cluster's version."""
        addresses = {cluster.broker_address(b): f"broker {b}" for b in cluster.broker_ids}
        return cls(
            list(addresses), specs or cluster.target.protocol_specs, labels=addresses,
            base_config=cluster.client_config(), keep_body_bytes=keep_body_bytes,
        )

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> Proxy:
        if self._thread is not None:
            return self
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="kcts-proxy", daemon=True)
        self._thread.start()
        try:
            self._call(self._open(), timeout=30)
        except BaseException:
            self.stop()
            raise
        return self

    def _run_loop(self) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    def stop(self) -> None:
        if self._stopped or self._loop is None or self._thread is None:
            self._stopped = True
            return
        self._stopped = True
        try:
            self._call(self._close(), timeout=30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _open(self) -> None:
        self._listener_lock = asyncio.Lock()
        for host, port in self.upstreams:
            await self.ensure_listener(host, port)

    async def _close(self) -> None:
        for server, _ in self._listeners.values():
            server.close()
        for task in list(self._links):
            task.cancel()
        await asyncio.gather(*self._links, return_exceptions=True)
        for server, _ in self._listeners.values():
            await server.wait_closed()

    # -- addresses ---------------------------------------------------------------------------
    async def ensure_listener(self, host: str, port: int) -> tuple[str, int]:
        """The proxy address in front of host:port, opening a listener the first time."""
        known = self._listeners.get((host, port))
        if known is not None:
            return known[1]
        assert self._listener_lock is not None
        async with self._listener_lock:
            known = self._listeners.get((host, port))
            if known is not None:
                return known[1]
            label = self.labels.get((host, port), f"{host}:{port}")

            async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                link = Link(self, label, (host, port), reader, writer)
                task = asyncio.current_task()
                assert task is not None
                self._links.add(task)
                try:
                    await link.run()
                except asyncio.CancelledError:
                    # Cancelled by stop(): Link.run closed both sides already; Python 3.11's
                    # stream callback would log a cancelled connection task as an error.
                    pass
                finally:
                    self._links.discard(task)

            server = await asyncio.start_server(accept, BIND_HOST, 0, limit=STREAM_LIMIT)
            address = server.sockets[0].getsockname()[:2]
            self._listeners[(host, port)] = (server, (address[0], address[1]))
            return self._listeners[(host, port)][1]

    def proxied_address(self, host: str, port: int) -> tuple[str, int]:
        """Where clients reach host:port through the proxy (a listener must exist)."""
        known = self._listeners.get((host, port))
        return (host, port) if known is None else known[1]

    def address_of(self, upstream: tuple[str, int]) -> tuple[str, int]:
        known = self._listeners.get(upstream)
        if known is None:
            raise ProxyError(f"the proxy has no listener for {upstream[0]}:{upstream[1]}")
        return known[1]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join("{}:{}".format(*self.address_of(u)) for u in self.upstreams)

    def client_config(self) -> dict[str, str]:
        """The target's client settings (SASL included, TLS left to the proxy), with bootstrap
        through the proxy."""
        return {**self.base_config, "bootstrap.servers": self.bootstrap_servers}

    # -- rules -------------------------------------------------------------------------------
    def add(self, rule: R) -> R:
        rule.bind(self.specs)
        with self._rules_lock:
            self.rules = (*self.rules, rule)
        return rule

    def remove(self, rule: Rule) -> None:
        with self._rules_lock:
            self.rules = tuple(r for r in self.rules if r is not rule)

    def clear_rules(self) -> None:
        with self._rules_lock:
            self.rules = ()

    # -- evidence ----------------------------------------------------------------------------
    def note_error(self, text: str) -> None:
        self.errors.append(text)

    def check(self) -> None:
        """Raise if the proxy met errors (an undecodable response, a failed pump)."""
        if self.errors:
            raise ProxyError("the proxy met errors: " + "; ".join(self.errors[:5]))

    def describe(self) -> str:
        rules = ", ".join(r.describe() for r in self.rules) or "none"
        down = f"; broker unreachable {len(self.unreachable)}x" if self.unreachable else ""
        return f"proxy rules: {rules}; errors: {self.errors[:3]}{down}; {self.recording.summary()}"
