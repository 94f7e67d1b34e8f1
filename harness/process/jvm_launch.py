"""The one `java` command line of the harness, for Kafka nodes and Java clients alike.

    java <role's options> <session marker> [<class-data archive>] <properties> -cp <classpath> <main> <args>

Start-up dominates short scenarios on 2 cores, so every role runs on a small heap, the C1 compiler
only and the serial collector, and maps the classpath's class-data-sharing archive (cds.py) when
there is one. The option values per role are tuned (`kcts bench startup` measures them): change
them there, not per caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path

from harness import session


class Role(StrEnum):
    BROKER = "broker"  # a Kafka node (broker, controller or both) and its storage tool
    CLIENT = "client"  # a Java client: kafka-tools' programs and the harness's drivers


OPTIONS: dict[Role, tuple[str, ...]] = {
    # Plenty for test traffic; log4j's shutdown hook and JMX cost start-up and stop time for nothing.
    # A node mostly idles between scenes, and idle it still runs its heartbeats, Raft fetches and
    # timers, mostly in the interpreter at the default thresholds (a cluster took about half a core
    # serving nothing, `kcts bench idle`): a tenth of them compiles those paths in seconds.
    Role.BROKER: (
        "-Xms128m", "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CompileThresholdScaling=0.1",
        "-Xss512k",
        "-XX:-UsePerfData", "-Djava.awt.headless=true", "-Dlog4j2.shutdownHookEnabled=false",
        "-Dlog4j2.disable.jmx=true",
    ),
    # A client holds a few batches at a time; several run beside the brokers.
    Role.CLIENT: ("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData"),
}


def java_command(
    role: Role,
    classpath: str,
    main_class: str,
    args: Sequence[str] = (),
    *,
    archive: Path | None = None,
    dump_archive: Path | None = None,
    properties: Sequence[str] = (),
) -> list[str]:
    """`java` for one role, carrying the session marker (the reaper finds the JVM by it).

    `dump_archive`: write this classpath's class-data archive there at exit (the JVM dumps what it
    loaded). Otherwise `archive` is mapped if it exists; a missing one only costs start-up time.
    `properties` (`-D...`) come after the options and before the classpath.
    """
    cmd = ["java", *OPTIONS[role], session.current().marker]
    if dump_archive is not None:
        cmd.append(f"-XX:ArchiveClassesAtExit={dump_archive}")
    elif archive is not None and archive.exists():
        cmd.append(f"-XX:SharedArchiveFile={archive}")
    return [*cmd, *properties, "-cp", classpath, main_class, *args]
