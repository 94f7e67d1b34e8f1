"""`kcts report [RUN]`: a run's Allure results rendered as the Allure HTML report, by Allure's own tool.

Allure's command line (`io.qameta.allure:allure-commandline`, a zip on Maven Central) is fetched
once into the kcts cache, like the Kafka jars, and run on the installed JDK. The report is written
as one self-contained page (`--single-file`), so it opens from a CI artifact or a file:// URL with
nothing served.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from harness import session
from harness.errors import KctsError
from harness.kafka.dist import cache_root, check_java
from harness.kafka.maven import copy_artifact, require_maven
from harness.process.spawn import spawn

ALLURE_VERSION = "2.34.1"
GENERATE_TIMEOUT = 300.0


def allure_home(version: str = ALLURE_VERSION) -> Path:
    """The unpacked Allure command line of `version`, fetched from Maven Central on first use."""
    home = cache_root() / "allure" / version
    tool = home / f"allure-{version}" / "bin" / "allure"
    if tool.exists():
        return tool
    require_maven("Allure's command line")
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if tool.exists():
            return tool
        download = Path(tempfile.mkdtemp(prefix="allure-", dir=home))
        try:
            result = copy_artifact(download, f"io.qameta.allure:allure-commandline:{version}:zip")
            if not result.ok:
                why = "Maven Central cannot be reached" if result.unreachable else "Maven could not fetch it"
                raise KctsError(f"Allure's command line {version} was not fetched: {why} ({result.errors}); "
                                "fix the network or KCTS_MAVEN_ARGS (a settings file or local repository)")
            (archive,) = download.glob("*.zip")
            with zipfile.ZipFile(archive) as z:
                z.extractall(download / "unpacked")
            unpacked = download / "unpacked" / f"allure-{version}"
            (unpacked / "bin" / "allure").chmod(0o755)
            unpacked.rename(home / f"allure-{version}")
        finally:
            shutil.rmtree(download, ignore_errors=True)
    return tool


def resolve_run(run: str | None, reports: Path = Path("reports")) -> Path:
    """The run folder `run` names: a path, a run id under reports/, or (None) reports/latest."""
    candidates = [Path(run), reports / run] if run else [reports / "latest"]
    for c in candidates:
        if (c / "allure-results").is_dir():
            return c.resolve()
    named = run or str(reports / "latest")
    raise KctsError(f"{named} has no allure-results/: name a run folder that `kcts run` wrote "
                    f"(reports/<run-id>), or run the suites first")


def render(run_dir: Path, timeout: float = GENERATE_TIMEOUT, history: Path | None = None) -> Path:
    """Render `run_dir/allure-results` into `run_dir/allure-report/`; the report's index.html.

    `history` is the `history/` folder of an earlier report (allure-report/history): Allure reads it
    from the results to draw the trend. The new report's own history is written beside its page."""
    results = run_dir / "allure-results"
    if not any(results.glob("*-result.json")):
        raise KctsError(f"{results} holds no test result: the run ended before any check reported")
    if history is not None:
        carry_history(history, results / "history")
    check_java()
    tool = allure_home()
    out = run_dir / "allure-report"
    # The JVM carries the session's marker, so the reaper finds it if kcts dies while it renders.
    env = {**os.environ, "JAVA_OPTS": f"{os.environ.get('JAVA_OPTS', '')} {session.current().marker}".strip()}
    proc = spawn([str(tool), "generate", str(results), "-o", str(out), "--clean", "--single-file"],
                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise KctsError(f"allure generate did not finish in {timeout:.0f} s") from None
    index = out / "index.html"
    if proc.returncode != 0 or not index.exists():
        tail = " | ".join(output.strip().splitlines()[-5:])
        raise KctsError(f"allure generate failed (exit {proc.returncode}): {tail}")
    write_history(index, out / "history")
    return index


# A single-file report holds its files as d('path','base64') calls; history/ is among them.
_EMBEDDED = re.compile(r"d\('(history/[\w.-]+\.json)','([A-Za-z0-9+/=]*)'\)")


def write_history(index: Path, folder: Path) -> list[Path]:
    """The report's history/ (the trend's data), as a report in folders would have it: `--single-file`
    writes only index.html, and the next run's report needs these files to draw its trend."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in _EMBEDDED.findall(index.read_text(errors="replace")):
        path = folder / Path(name).name
        path.write_bytes(base64.b64decode(data))
        written.append(path)
    return written


def carry_history(history: Path, into: Path) -> None:
    """An earlier report's history/ into the results Allure renders next. A missing folder is a first
    run (in CI: no green run before this one): said, and no trend yet."""
    files = sorted(history.glob("*.json")) if history.is_dir() else []
    if not files:
        print(f"kcts report: no history in {history} (a first run): the trend starts with this one", flush=True)
        return
    into.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy2(f, into / f.name)


def main(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kcts report", description="render a run's Allure report (HTML)")
    parser.add_argument("run", nargs="?", help="a run folder or run id (default: reports/latest)")
    parser.add_argument("--reports-dir", type=Path, default=Path(os.environ.get("KCTS_REPORTS", "reports")))
    parser.add_argument("--history", type=Path, default=None,
                        help="an earlier report's history/ (RUN/allure-report/history, e.g. the last green CI run's): "
                        "the report's trend continues from it; a missing folder is a first run")
    opts = parser.parse_args(args)
    index = render(resolve_run(opts.run, opts.reports_dir), history=opts.history)
    print(f"kcts report: {index}")
    return 0
