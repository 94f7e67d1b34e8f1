"""The package layout of the wheel (the rest of the metadata is pyproject.toml's).

The repository keeps conftest.py, suites/, fixtures/ and docker/ at its root beside harness/. The
wheel ships harness/ as the importable package it is, and the root as `kcts_suite/` beside it, with
no __init__.py: pytest loads kcts_suite/conftest.py as a root conftest and imports `suites.*` and
`fixtures.*` from kcts_suite/, as it does from a checkout (harness/layout.py finds either). Top-level
`suites` and `fixtures` packages would shadow any other of those names in the user's site-packages.
The package lists are computed here, not written in pyproject.toml, so that a new suite folder ships
without anyone editing a list; folders of data only (driver sources, profiles, Dockerfiles) are
namespace packages, which is how setuptools ships a folder's files.
"""

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

NOT_CODE = ["*__pycache__*"]
HARNESS = find_namespace_packages(include=["harness", "harness.*"], exclude=NOT_CODE)
ROOT = find_namespace_packages(include=["suites", "suites.*", "fixtures", "fixtures.*", "docker", "docker.*"],
                               exclude=NOT_CODE)


class BuildPy(build_py):
    """The repository root is kcts_suite's folder: of its own modules only conftest.py is the suite's
    (setup.py and anything else lying there is not)."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if package != "kcts_suite" or m[1] == "conftest"]


setup(
    cmdclass={"build_py": BuildPy},
    packages=[*HARNESS, "kcts_suite", *(f"kcts_suite.{p}" for p in ROOT)],
    package_dir={"kcts_suite": "."},
    package_data={
        "harness": ["*.toml"],
        "harness.reporting": ["*.json"],
        "harness.profiles": ["*.toml", "*.sql"],
        "harness.clients.java": ["*.java"],
        "harness.clients.go": ["*.go", "go.mod", "go.sum"],
        # The other client stacks' drivers (harness/clients/stacks/), built or installed on first use.
        "harness.clients.sarama": ["*.go", "go.mod", "go.sum"],
        "harness.clients.kafka-go": ["*.go", "go.mod", "go.sum"],
        "harness.clients.kafkajs": ["*.js", "package.json", "package-lock.json"],
        "harness.clients.platformatic_kafka": ["*.mjs", "*.js", "package.json", "package-lock.json"],
        "harness.clients.node_runtime": ["package.json", "package-lock.json"],
        "harness.cluster.kcts_kfake": ["*.go", "go.mod", "go.sum"],
        # pytest's configuration (markers, timeout) of an installed run is the checkout's.
        "kcts_suite": ["pyproject.toml"],
        **{f"kcts_suite.{p}": ["*"] for p in ROOT if p.split(".")[0] == "docker"},
    },
)
