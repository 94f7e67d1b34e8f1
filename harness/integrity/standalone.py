"""A Spark standalone cluster on loopback (one master, one worker), from the pyspark install.

It stands in for "a real Spark cluster" where the checker's non-local path must be exercised: the
driver ships the Kafka connector to executors in other JVMs, and reads run there. Both daemons
carry the session marker (so do the executors, through spark.executor.extraJavaOptions) and die
with the thread that started them.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from harness import session
from harness.errors import SetupError
from harness.integrity.spark import LOOPBACK
from harness.process.ports import free_port
from harness.process.worker import WorkerProcess
from harness.waiting import wait_until


def spark_class() -> Path:
    import pyspark

    script = Path(pyspark.__file__).parent / "bin" / "spark-class"
    if not script.exists():
        raise SetupError(f"pyspark has no {script}; reinstall pyspark (pip install -e .[dev])")
    return script


class SparkStandalone:
    """`with SparkStandalone() as spark_cluster:` -> `spark_cluster.url` is spark://127.0.0.1:<port>."""

    def __init__(self, cores: int = 1, memory: str = "2g", timeout: float = 90.0) -> None:
        self.cores = cores
        self.memory = memory
        self.timeout = timeout
        self.port = free_port()
        self.url = f"spark://{LOOPBACK}:{self.port}"
        self.workdir = session.current().scratch("spark-standalone")
        self.master: WorkerProcess | None = None
        self.worker: WorkerProcess | None = None

    def _daemon(self, name: str, main: str, args: list[str]) -> WorkerProcess:
        env = {
            **os.environ, "SPARK_LOCAL_IP": LOOPBACK, "SPARK_LOG_DIR": str(self.workdir),
            "SPARK_DAEMON_JAVA_OPTS": f"{session.current().marker} -XX:-UsePerfData",
        }
        daemon = WorkerProcess(
            name, [str(spark_class()), main, *args], self.workdir / f"{name}.log",
            commands=False, dump_signal=signal.SIGQUIT, env=env,
        )
        return daemon.start()

    def start(self) -> SparkStandalone:
        self.master = self._daemon("spark-master", "org.apache.spark.deploy.master.Master", [
            "--host", LOOPBACK, "--port", str(self.port), "--webui-port", str(free_port()),
        ])
        self._wait_for(self.master, "I have been elected leader")
        self.worker = self._daemon("spark-worker", "org.apache.spark.deploy.worker.Worker", [
            "--host", LOOPBACK, "--cores", str(self.cores), "--memory", self.memory,
            "--webui-port", str(free_port()), "--work-dir", str(self.workdir / "work"), self.url,
        ])
        self._wait_for(self.worker, "Successfully registered with master")
        return self

    def _wait_for(self, daemon: WorkerProcess, line: str) -> None:
        def logged() -> bool:
            if not daemon.running():
                raise SetupError(f"{daemon.describe()} exited before it said {line!r}: {daemon.tail(20)}")
            return any(line in seen for seen in daemon.tail(200))

        wait_until(logged, self.timeout, lambda: f"{daemon.describe()} to say {line!r}: {daemon.tail(10)}", 0.2)

    def log(self, name: str) -> str:
        daemon = self.master if name == "master" else self.worker
        return daemon.log_path.read_text() if daemon is not None and daemon.log_path.exists() else ""

    def close(self) -> None:
        for daemon in (self.worker, self.master):
            if daemon is not None:
                daemon.stop(30)

    def __enter__(self) -> SparkStandalone:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()
