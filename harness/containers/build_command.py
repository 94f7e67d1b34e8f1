"""`kcts image`: build (or find) the docker backend's Apache Kafka image, or the runner image, offline."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import docker_engine
from harness.containers import images, runner
from harness.installed import version
from harness.kafka.dist import DEFAULT_VERSION, check_java, normalize_version, resolve


def main(args: list[str]) -> int:
    """Build (or find) the docker backend's Apache Kafka image, or the runner image, offline; print its tags."""
    parser = argparse.ArgumentParser(prog="kcts image", description="build kcts/kafka:<version> offline "
                                     "(debootstrap base + Maven Central jars), as docker/compose.yaml runs it")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    parser.add_argument("--runner", action="store_true", help="build kcts-runner:<kcts version> instead: kcts "
                        "installed from this checkout's wheel, its Python deps, a JDK and the --kafka-version jars, "
                        "to run the suites without a checkout (docker run --rm kcts-runner kcts run -m smoke)")
    opts = parser.parse_args(args)
    check_java()
    engine = docker_engine.client()  # no daemon: one clear line before any wheel is built
    if opts.runner:
        with tempfile.TemporaryDirectory(prefix="kcts-runner-") as scratch:
            built = runner.ensure_runner(engine, resolve(normalize_version(opts.kafka_version)), version(),
                                         Path(scratch))
        how = f"built in {built.seconds:.0f} s" if built.seconds else "already built"
        print(f"{built.tag}, {runner.REPO}:{version()} and {runner.REPO}:latest ({how})")
        return 0
    built = images.ensure_kafka(engine, resolve(normalize_version(opts.kafka_version)))
    how = f"built in {built.seconds:.0f} s" if built.seconds else "already built"
    print(f"{built.tag} and {images.KAFKA_REPO}:{built.tag.split(':')[1].split('-')[0]} ({how})")
    return 0
