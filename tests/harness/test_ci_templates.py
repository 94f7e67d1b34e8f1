"""The CI templates (docs/ci) cannot rot: each one's shell steps run here, in order, as its CI would run
them, against a local cluster the test holds (the user's cluster in the template), with kcts installed
by the template's own step from a wheel of this checkout. Each pipeline runs twice, so that the second
run finds the first as its last green run: `kcts diff` runs against it and the Allure trend carries on.

What a CI does besides the shell is emulated, and named where it is: actions (checkout, setup-python,
setup-java) are no-ops here (this machine has the JDK; the virtualenv's python is on PATH); uploads
are not made, their folders are kept as the CI's artifact store would keep them, and the steps that
download artifacts get them from that store. The wheel's dependencies come from this tox env (a path
file in the virtualenv), so the install step installs the wheel alone, without fetching PySpark again.

Heavy (about 3 min: six smoke runs against the held cluster); `tox -e ci` runs it."""

from __future__ import annotations

import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import layout
from harness.cluster.local import LocalCluster, LocalClusterSpec

pytestmark = [pytest.mark.live, pytest.mark.heavy]
TEMPLATES = layout.ROOT / "docs" / "ci"
SELECTION = "-m smoke"  # the template's KCTS_ARGS, kept short here


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(layout.ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (built,) = out.glob("kcts-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv without kcts, whose path file reaches this env's packages but kcts (linked one
    by one, so that pip sees the dependencies installed and no kcts to replace)."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=120)
    deps = tmp_path_factory.mktemp("deps")
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if not re.match(r"(kcts|__editable__.*kcts|_?harness)", entry.name, re.I):
            (deps / entry.name).symlink_to(entry)
    (purelib,) = (root / "lib").glob("python3*/site-packages")
    (purelib / "deps.pth").write_text(f"{deps}\n")
    return root


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with LocalCluster(LocalClusterSpec()) as held:
        yield held.bootstrap_servers


def environment(venv: Path, **extra: str) -> dict[str, str]:
    """The job's environment: this machine's, without this tox env or the checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KCTS_", "PYTHON", "VIRTUAL_ENV", "TOX_"))}
    path = [p for p in env.get("PATH", "").split(":") if ".tox" not in p]
    return env | {"PATH": ":".join([str(venv / "bin"), *path]), **extra}


def shell(script: str, cwd: Path, env: dict[str, str], log: list[str]) -> int:
    """One step's script, as the runners run it: bash, stopping at the first failing command."""
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    log.append(f"$ {script}\n-> exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.returncode


# ---- GitHub Actions ----

MATRIX_EXPR = re.compile(r"\$\{\{\s*matrix\.(\w+)\s*\}\}")


def expand(value: Any, matrix: dict[str, str]) -> str:
    """A value with its `${{ matrix.X }}` filled in; any other expression in a value the shell sees is
    one this test cannot stand in for, and fails it (so a template cannot slip one in unrun)."""
    text = MATRIX_EXPR.sub(lambda m: matrix[m[1]], str(value))
    assert "${{" not in text, f"an expression the test cannot evaluate: {text}"
    return text


def runs_after_failure(step: dict[str, Any]) -> bool:
    return str(step.get("if", "")).replace(" ", "") in ("${{!cancelled()}}", "${{always()}}", "always()",
                                                        "!cancelled()")


@dataclass
class Store:
    """The CI's artifacts: this run's uploads, and the last green run's."""

    now: dict[str, Path] = field(default_factory=dict)
    green: dict[str, Path] = field(default_factory=dict)


def github_job(job: dict[str, Any], matrix: dict[str, str], workflow_env: dict[str, str], work: Path,
               env: dict[str, str], store: Store, log: list[str]) -> bool:
    """One job of the workflow: True when it passed."""
    work.mkdir(parents=True)
    summary = work.parent / f"{work.name}.summary.md"
    job_env = {**env, **workflow_env, **{k: expand(v, matrix) for k, v in (job.get("env") or {}).items()},
               "GITHUB_STEP_SUMMARY": str(summary)}
    failed = False
    for step in job["steps"]:
        if failed and not runs_after_failure(step):
            continue
        uses = step.get("uses", "")
        with_ = {k: str(v) for k, v in (step.get("with") or {}).items()}
        if "run" in step:
            code = shell(expand(step["run"], matrix), work, {**job_env, **{k: expand(v, matrix) for k, v in
                                                                          (step.get("env") or {}).items()}}, log)
            failed |= code != 0 and not step.get("continue-on-error")
        elif uses.startswith("actions/upload-artifact"):  # not uploaded: kept where the store would keep it
            store.now[expand(with_["name"], matrix)] = work / expand(with_["path"], matrix)
        elif uses.startswith("actions/download-artifact"):
            pattern = re.compile(with_["pattern"].replace("*", ".*") + "$")
            for name, path in store.now.items():
                if pattern.match(name):
                    shutil.copytree(path, work / with_["path"] / name)
        elif uses.startswith("dawidd6/action-download-artifact"):
            assert with_["workflow_conclusion"] == "success", "the last green run is the last successful one"
            name = expand(with_["name"], matrix)
            if name in store.green:
                shutil.copytree(store.green[name], work / with_["path"])
            else:
                log.append(f"{uses}: no artifact {name} in a green run (continue-on-error: "
                           f"{step.get('continue-on-error')})")
                failed |= not step.get("continue-on-error")
        else:  # checkout, setup-python, setup-java: this machine has what they set up
            assert uses.split("@")[0] in ("actions/checkout", "actions/setup-python", "actions/setup-java"), uses
    return not failed


def run_workflow(workflow: dict[str, Any], root: Path, env: dict[str, str], store: Store, log: list[str]
                 ) -> dict[str, bool]:
    """The workflow's jobs in the order of their `needs`, each matrix entry a job of its own."""
    results: dict[str, bool] = {}
    jobs = workflow["jobs"]
    for name in sorted(jobs, key=lambda n: len(jobs[n].get("needs") or [])):
        job = jobs[name]
        needs = job.get("needs") or []
        needs = [needs] if isinstance(needs, str) else needs
        if not all(results.get(n, False) for n in needs) and not runs_after_failure(job):
            continue
        entries = (job.get("strategy") or {}).get("matrix", {}).get("include") or [{}]
        ok = [github_job(job, entry, workflow["env"], root / f"{name}-{i}", env, store, log)
              for i, entry in enumerate(entries)]
        results[name] = all(ok)
    return results


def test_github_actions_columns_then_merge_run_green_twice_and_the_second_diffs_and_trends(
        tmp_path: Path, wheel: Path, venv: Path, cluster: str) -> None:
    workflow = yaml.safe_load((TEMPLATES / "github-actions.yml").read_text())
    # The user's edits: the wheel, the selection and their clusters (two columns on the held one).
    workflow["env"] |= {"KCTS_WHEEL": str(wheel), "KCTS_ARGS": SELECTION}
    columns = workflow["jobs"]["column"]["strategy"]["matrix"]["include"]
    for c in columns:
        c["bootstrap"] = cluster
    names = [c["column"] for c in columns]
    run_step = next(s for s in workflow["jobs"]["column"]["steps"] if s.get("name") == "Run the suites")
    assert not run_step.get("continue-on-error") and "||" not in run_step["run"], "a FAIL must fail the job"
    store, log = Store(), []
    env = environment(venv)
    for attempt in (1, 2):
        root = tmp_path / f"run{attempt}"
        results = run_workflow(workflow, root, env, store, log)
        assert results == {"column": True, "matrix": True}, "\n".join(log[-6:])
        matrix = json.loads((store.now["matrix-page"] / "matrix.json").read_text())
        assert [t["name"] for t in matrix["targets"]] == names
        assert (store.now["matrix-page"] / "matrix.html").is_file()
        for i, name in enumerate(names):
            run = store.now[f"kcts-{name}"]
            counts = json.loads((run / "results.json").read_text())["summary"]["counts"]
            assert counts["pass"] >= 1 and counts["fail"] == counts["error"] == 0, counts
            assert (store.now[f"junit-{name}"]).is_file() and (run / "allure-report" / "index.html").is_file()
            trend = json.loads((run / "allure-report" / "history" / "history-trend.json").read_text())
            assert len(trend) == attempt, f"the Allure trend of {name} has {len(trend)} runs, not {attempt}"
            summary = (root / f"column-{i}.summary.md").read_text()
            if attempt == 1:
                assert "No green run" in summary, summary
            else:
                assert (run / "diff.md").is_file() and "No green run" not in summary, summary
        store.green, store.now = store.now, {}


# ---- GitLab CI/CD ----

class _Artifacts(http.server.BaseHTTPRequestHandler):
    """GitLab's `jobs/artifacts/REF/download?job=NAME`: the last green pipeline's zip, or 404."""

    zip_of: bytes | None = None
    asked: list[str] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        body = type(self).zip_of
        if body is None or not re.match(r"/api/v4/projects/7/jobs/artifacts/main/download\?job=kcts$", self.path):
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def zipped(work: Path, paths: list[str]) -> bytes:
    """The job's artifacts as GitLab serves them: a zip of its `paths`, relative to the project."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for p in paths:
            for f in (work / p).rglob("*"):
                if f.is_file():
                    z.write(f, f.relative_to(work))
    return out.getvalue()


def test_gitlab_ci_job_runs_green_twice_and_the_second_diffs_and_trends(
        tmp_path: Path, wheel: Path, venv: Path, cluster: str) -> None:
    pipeline = yaml.safe_load((TEMPLATES / "gitlab-ci.yml").read_text())
    job = pipeline["kcts"]
    script = job["script"]
    assert not any("||" in line for line in script), "a FAIL must fail the job"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Artifacts)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for attempt in (1, 2):
            work = tmp_path / f"pipeline{attempt}"
            work.mkdir()
            variables = {**pipeline["variables"], "KCTS_WHEEL": str(wheel), "KCTS_ARGS": SELECTION,
                         "KAFKA_BOOTSTRAP_SERVERS": cluster, "CI_JOB_TOKEN": "token", "CI_PROJECT_ID": "7",
                         "CI_COMMIT_REF_NAME": "main", "CI_JOB_NAME": "kcts",
                         "CI_API_V4_URL": f"http://127.0.0.1:{server.server_port}/api/v4"}
            env = environment(venv, **{k: str(v) for k, v in variables.items()})
            log: list[str] = []
            # before_script and script: one shell, the job fails at the first failing line;
            # after_script: its own shell, run whatever the script did, its failures ignored.
            code = shell("\n".join([*job["before_script"], *script]), work, env, log)
            assert code == 0, "\n".join(log)
            shell("\n".join(job["after_script"]), work, env, log)
            column = work / "reports" / variables["COLUMN"]
            counts = json.loads((column / "results.json").read_text())["summary"]["counts"]
            assert counts["pass"] >= 1 and counts["fail"] == counts["error"] == 0, counts
            assert job["artifacts"]["reports"]["junit"] == "reports/$COLUMN/junit.xml"
            assert (column / "junit.xml").is_file()
            assert (column / "matrix" / "matrix.html").is_file(), "\n".join(log)
            trend = json.loads((column / "allure-report" / "history" / "history-trend.json").read_text())
            assert len(trend) == attempt, "\n".join(log)
            said = "\n".join(log)
            # said by the job (a line of its output), not only quoted in its script
            assert bool(re.search(r"^No green pipeline before this one", said, re.M)) == (attempt == 1), said
            assert (column / "diff.md").is_file() == (attempt == 2), said
            # GitLab keeps the job's artifacts (the job passed: it is the last green one)
            paths = [p.replace("$COLUMN", variables["COLUMN"]) for p in job["artifacts"]["paths"]]
            _Artifacts.zip_of = zipped(work, paths)
    finally:
        server.shutdown()
