"""Java clients of the Kafka version under test: kafka-tools' verifiable clients and small drivers.

Both speak JSON lines on stdout. `JavaClient` runs one such program as a service (start, events,
stop) and keeps every event it printed, in the one event format (harness.process.events), so
that assertions read the history. Drivers are the `.java` files in harness/clients/java/,
compiled once per (Kafka classpath, source) with the JDK against the resolved jars and cached
under $KCTS_CACHE/drivers.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness import session
from harness.clients import java_security
from harness.clients.driver import ClientDriver
from harness.clients.java_security import properties_file
from harness.errors import ClientLacks, NotSupported, SetupError
from harness.kafka.dist import DEFAULT_VERSION, KafkaDistribution, cache_root
from harness.process import jvm_launch
from harness.process.cds import cds_archive_path

DRIVER_SOURCES = Path(__file__).resolve().parent / "java"
SHARED_SOURCES = ("KctsJson",)  # compiled with every driver
VERIFIABLE_PRODUCER = "org.apache.kafka.tools.VerifiableProducer"
VERIFIABLE_CONSUMER = "org.apache.kafka.tools.VerifiableConsumer"
TRANSACTIONAL_COPIER = "org.apache.kafka.tools.TransactionalMessageCopier"


# kafka-clients 4.4.0 moved o.a.k.common.utils.Exit to ...utils.internals.Exit; the newest
# kafka-tools on Maven Central (4.3.1) still calls the old class, and a tool that exits through it
# (TransactionalMessageCopier does) dies with NoClassDefFoundError. This forwarder restores the
# old name, so the tools run on the client version under test rather than on an older one.
_EXIT_SHIM = """\
package org.apache.kafka.common.utils;

public final class Exit {
    private Exit() { }
    public static void exit(int code) { org.apache.kafka.common.utils.internals.Exit.exit(code); }
    public static void exit(int code, String why) { org.apache.kafka.common.utils.internals.Exit.exit(code, why); }
    public static void halt(int code) { org.apache.kafka.common.utils.internals.Exit.halt(code); }
    public static void halt(int code, String why) { org.apache.kafka.common.utils.internals.Exit.halt(code, why); }
    public static void addShutdownHook(String name, Runnable runnable) {
        org.apache.kafka.common.utils.internals.Exit.addShutdownHook(name, runnable);
    }
}
"""


def tools_classpath(dist: KafkaDistribution) -> str:
    """The distribution's classpath, then the Exit forwarder when its kafka-clients lacks the old class.

    The forwarder only adds a class the jars lack, so it may come last; it must, as must anything else
    a client adds, because a JVM maps a class-data archive only for the classpath it was dumped with or
    one that extends it (a client's start costs about twice the CPU without it)."""
    clients = dist.jar("kafka-clients")
    with zipfile.ZipFile(clients) as jar:
        names = set(jar.namelist())
    moved = "org/apache/kafka/common/utils/Exit.class" not in names
    if not moved or "org/apache/kafka/common/utils/internals/Exit.class" not in names:
        return dist.classpath
    classes = cache_root() / "shims" / clients.stem
    if not (classes / "org/apache/kafka/common/utils/Exit.class").exists():
        classes.mkdir(parents=True, exist_ok=True)
        with open(classes.parent / f".{clients.stem}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            source = classes.parent / f"{clients.stem}-src" / "Exit.java"
            source.parent.mkdir(exist_ok=True)
            source.write_text(_EXIT_SHIM)
            proc = subprocess.run(
                ["javac", "-nowarn", "-d", str(classes), "-cp", str(clients), str(source)],
                capture_output=True, text=True, timeout=120,
            )
            if proc.returncode != 0:
                raise SetupError(f"compiling the Exit forwarder for {clients.name} failed: {proc.stderr[-800:]}")
    return os.pathsep.join([dist.classpath, str(classes)])


def tool_option(dist: KafkaDistribution, main_class: str, option: str, older: str) -> str:
    """`option` if the distribution's kafka-tools class `main_class` knows it, else `older`: 4.x tools
    take --command-config where 3.x ones took --producer.config."""
    entry = main_class.replace(".", "/") + ".class"
    with zipfile.ZipFile(dist.jar("kafka-tools")) as jar:
        try:
            code = jar.read(entry)
        except KeyError:
            return older
    return option if option.encode() in code else older


def compile_driver(dist: KafkaDistribution, name: str) -> Path:
    """Compile harness/clients/java/<name>.java, with the helpers every driver shares, against `dist`;
    return the class directory."""
    source = DRIVER_SOURCES / f"{name}.java"
    if not source.exists():
        raise SetupError(f"no Java driver {name}: {source} is missing")
    sources = [source, *(DRIVER_SOURCES / f"{h}.java" for h in SHARED_SOURCES)]
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in sources) + dist.classpath.encode()).hexdigest()[:12]
    out = cache_root() / "drivers" / f"{name}-{dist.version}-{digest}"
    if (out / f"{name}.class").exists():
        return out
    javac = shutil.which("javac")
    if javac is None:
        raise SetupError("javac not found; install a JDK 17+ (apt-get install openjdk-17-jdk-headless)")
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    proc = subprocess.run(
        [javac, "-nowarn", "-d", str(staging), "-cp", dist.classpath, *map(str, sources)],
        capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0:
        lacks = missing_api(proc.stderr)
        if lacks and dist.version != DEFAULT_VERSION:
            # The drivers are written against the default release; an older kafka-clients that lacks
            # a method they call does not have the feature the check is about.
            raise ClientLacks(f"kafka-clients {dist.version}", f"{lacks}, which the {name} driver calls",
                              f"javac: {first_error(proc.stderr)}")
        raise SetupError(f"compiling Java driver {name} against Kafka {dist.version} failed:\n{proc.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return out


def missing_api(javac_errors: str) -> str | None:
    """`ConsumerRecords.nextOffsets()` from javac's "cannot find symbol" (symbol, then location), or None."""
    symbol = re.search(r"symbol:\s+(method|class|variable)\s+(\w+)(\([^)]*\))?", javac_errors)
    if symbol is None:
        return None
    owner = re.search(r"location:\s+(?:variable \w+ of type|class|interface)\s+([\w.]+)", javac_errors)
    member = symbol[2] + ("()" if symbol[1] == "method" else "")
    return f"{owner[1].split('<')[0].rsplit('.', 1)[-1]}.{member}" if owner else member


def first_error(javac_errors: str) -> str:
    lines = [line.strip() for line in javac_errors.splitlines() if "error:" in line]
    return lines[0].split("error:", 1)[1].strip() if lines else javac_errors.strip()[:200]


def client_command(
    dist: KafkaDistribution, main_class: str, args: list[str], extra_classpath: Path | None = None
) -> list[str]:
    """The client JVM (harness.process.jvm_launch) on `dist`'s classpath, with the Exit forwarder when
    needed and `extra_classpath` after it (a driver's classes are its own: none shadows a Kafka one); it
    maps the brokers' class-data archive when there is one, which the distribution's classpath first keeps
    valid."""
    cp = tools_classpath(dist)
    if extra_classpath is not None:
        cp = os.pathsep.join([cp, str(extra_classpath)])
    archive = cds_archive_path(cache_root(), dist.version, dist.jars)
    return jvm_launch.java_command(jvm_launch.Role.CLIENT, cp, main_class, args, archive=archive)


class JavaClient(ClientDriver):
    """One Java client process printing JSON lines (see ClientDriver): a kafka-tools client or a driver."""

    def __init__(
        self,
        dist: KafkaDistribution,
        main_class: str,
        args: list[str],
        extra_classpath: Path | None = None,
        log_path: Path | None = None,
        config: Mapping[str, str] | None = None,
    ) -> None:
        """`config`: the librdkafka settings of the cluster (or proxy) it talks to; its TLS and SASL
        reach the drivers through a properties file (harness.clients.java_security)."""
        props = properties_file(config or {})
        super().__init__(
            main_class, client_command(dist, main_class, args, extra_classpath),
            log_path or session.current().scratch("java") / f"{main_class.rsplit('.', 1)[-1]}.log",
            env={**os.environ, java_security.ENV: str(props)} if props else None, dump_signal=signal.SIGQUIT,
        )

    @classmethod
    def driver(cls, dist: KafkaDistribution, name: str, args: list[str], **kw: Any) -> JavaClient:
        config = kw.get("config") or {}
        if config.get("bootstrap.servers"):
            java_reaches(str(config["bootstrap.servers"]), dist.version, config)
        return cls(dist, name, args, extra_classpath=compile_driver(dist, name), **kw)


# A throttle longer than any driver waits: the Java client would sit out the whole check.
THROTTLE_REFUSED_MS = 30_000
_reaches: dict[str, str | None] = {}  # bootstrap -> why the Java client cannot use it (the evidence), or None


def java_reaches(bootstrap: str, version: str, config: dict[str, Any] | None = None) -> None:
    """`NotSupported` at once where the Java client cannot talk to the target's first broker: its
    answer to a too-new ApiVersions, read at that version as the Java client reads it, tells the
    client to throttle for longer than a check waits (librdkafka's mock cluster advertises ApiVersions
    v0-2 and answers v5 with a compact array whose count is the entries' number, not one more, so that
    ThrottleTimeMs reads 1,179,648 ms: src/rdkafka_mock_handlers.c rd_kafka_mock_handle_ApiVersion,
    "FIXME: uvarint"). Decided from the ApiVersions exchange alone, before any scene, as a version a
    target does not advertise is: "not supported" (the Java client on this target), with the
    advertised ApiVersions range and the throttle read as the evidence. Asked once per bootstrap,
    over the clients' TLS and SASL (`config`, librdkafka's settings); a target that answers in
    KIP-511's layout, or not at all, is let through."""
    if bootstrap not in _reaches:
        from harness.protocol.auth import from_client_config
        from harness.protocol.client import RawClient

        host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
        why = None
        advertised = None
        try:
            transport = from_client_config({str(k): str(v) for k, v in (config or {}).items()})
            with RawClient.connect(host.strip("[]"), int(port), timeout=10, client_id="kcts-java-preflight",
                                   transport=transport) as c:
                asked, throttle = c.error_answer or (0, None)
                advertised = c.broker_versions.get(18)  # ApiVersions' own range, from the retried answer
        except Exception:  # noqa: BLE001 - the client itself will say what is wrong with this listener
            asked, throttle = 0, None
        if throttle is not None and throttle > THROTTLE_REFUSED_MS:
            listed = f"advertises ApiVersions v{advertised[0]}-{advertised[1]}; " if advertised else ""
            why = (f"{host}:{port} {listed}its answer to ApiVersions v{asked}, the Java client's first request, is an "
                   f"error whose bytes, read at v{asked} as the Java client reads them, carry ThrottleTimeMs "
                   f"{throttle} ({throttle / 60000:.1f} min); the client then sends that broker nothing more for "
                   "so long (\"Give up sending metadata request since no node is available\")")
        _reaches[bootstrap] = why
    why = _reaches[bootstrap]
    if why is not None:
        raise NotSupported(f"Java kafka-clients {version}", why)
