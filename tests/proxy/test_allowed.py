"""The catalogue of allowed behaviour (harness/allowed.toml) and what runs it: the loader's checks, the
rules named on the command line (`--proxy-rule`, `--allowed`, with `--replay`), and the runner's reading
of a run (OK only with 0 FAIL and 0 ERROR, the judged fraction, the pytest output in the run's folder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from harness import allowed as runner
from harness.cluster.base import Cluster
from harness.errors import KctsError
from harness.layout import ROOT
from harness.proxy.allowed import Allowed, load
from harness.proxy.allowed_rules import CoordinatorErrorOnce, NewTopicMissing
from harness.proxy.cluster import ProxiedCluster
from harness.proxy.replaying import behind_replay
from harness.proxy.rule_specs import RuleSpec, parse_rule
from harness.proxy.rules import ReplaceErrors
from harness.replay import CheckVerdict, Run


# -- the catalogue ----------------------------------------------------------------------------------
def test_every_item_cites_its_text_and_names_rules_and_tests_that_exist() -> None:
    items = load()
    assert items, "the catalogue is empty"
    for a in items.values():
        assert all((ROOT / t.split("::")[0]).exists() for t in a.tests), (a.id, a.tests)
        assert "/work/" not in a.source and ".txt" not in a.source, f"{a.id}: cite the document, not a file"
        assert a.quote.strip() and a.source.strip(), a.id
        if a.staged:
            assert a.make_rules() and not a.how, a.id
        else:
            assert a.how, f"{a.id}: say why it is not staged"


def test_every_kip_quote_is_in_the_kip_text() -> None:
    """A quote from a KIP whose text is in /work/shared/reference is that text, word for word."""
    reference = Path("/work/shared/reference")
    if not reference.is_dir():
        pytest.skip("the KIP texts are not on this machine")
    texts = {p.name.split("-")[1]: " ".join(p.read_text().split()) for p in reference.glob("KIP-*.txt")}
    for a in load().values():
        kip = a.source.split(",")[0].removeprefix("KIP-")
        if kip not in texts:
            continue
        for part in a.quote.split(" [...] "):
            assert " ".join(part.split()) in texts[kip], (a.id, part)


def _catalogue(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "allowed.toml"
    path.write_text(text)
    return path


ENTRY = """
[[allowed]]
id = "one"
title = "a behaviour"
source = "KIP-1, Proposed Changes"
quote = "It may."
tests = ["suites/smoke"]
[[allowed.rules]]
rule = "CoordinatorErrorOnce"
api = "OffsetFetch"
error = 14
"""

UNSTAGED = """
[[allowed]]
id = "two"
title = "a behaviour no proxy makes"
source = "KIP-2, Motivation"
quote = "It may."
tests = ["suites/smoke"]
rules = []
how = "the brokers hold that state"
"""


def test_the_loader_reads_a_staged_and_an_unstaged_item(tmp_path: Path) -> None:
    items = load(_catalogue(tmp_path, ENTRY + UNSTAGED))
    (rule,) = items["one"].make_rules()
    assert isinstance(rule, CoordinatorErrorOnce) and rule.error == 14
    assert items["one"].staged and not items["two"].staged and items["two"].how == "the brokers hold that state"


@pytest.mark.parametrize(("text", "message"), [
    (ENTRY.replace('quote = "It may."\n', ""), "missing quote"),
    (ENTRY.replace('source = "KIP-1, Proposed Changes"\n', ""), "missing source"),
    (ENTRY + ENTRY, "id 'one' is used twice"),
    (ENTRY.replace("error = 14", "error = 6"), "answers only"),
    (ENTRY.replace('"CoordinatorErrorOnce"', '"NoSuchRule"'), "no rule of harness/proxy/rules/, "),
    (UNSTAGED.replace('how = "the brokers hold that state"\n', ""), "no rules and no `how`"),
    (UNSTAGED.replace("rules = []\n", ""), "missing rules"),
    (ENTRY.replace('tests = ["suites/smoke"]\n', 'tests = ["suites/smoke"]\nhow = "why"\n'),
     r"staged \(it has rules\), so no `how`"),
])
def test_the_loader_refuses_a_broken_item_naming_it(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(KctsError, match=message):
        load(_catalogue(tmp_path, text))


def test_an_unreadable_catalogue_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(KctsError, match="cannot read the catalogue of allowed behaviour"):
        load(_catalogue(tmp_path, "[[allowed]\n"))


# -- --proxy-rule -----------------------------------------------------------------------------------
def test_a_proxy_rule_takes_python_literals_and_toml_values() -> None:
    spec = parse_rule('ReplaceErrors(api="TxnOffsetCommit", versions=(6, 6), count=None, error=35)')
    assert spec == RuleSpec("ReplaceErrors", (("api", "TxnOffsetCommit"), ("versions", (6, 6)), ("count", None),
                                              ("error", 35)))
    rule = spec.make()
    assert isinstance(rule, ReplaceErrors) and rule.count is None and rule.versions == (6, 6)
    assert parse_rule("NewTopicMissing(error=5, answers=2)").make().answers == 2, "a rule of allowed_rules.py"
    assert parse_rule("CapVersion(api='Fetch', max_version=8, versions=[0, 20])").args[-1] == ("versions", (0, 20))
    assert parse_rule("StripTopicIds(count=true)").args == (("count", True),), "TOML's true"
    assert isinstance(parse_rule("NewTopicMissing").make(), NewTopicMissing), "no arguments, no parentheses"


@pytest.mark.parametrize(("text", "message"), [
    ("ReplaceErrors('TxnOffsetCommit')", "name every argument"),
    ("NoSuchRule(error=1)", "no rule of"),
    ("Rule(api='Fetch')", None),  # the base class is a rule too: it does nothing
    ("ReplaceErrors(error=os.system)", "neither a Python literal nor a TOML value"),
    ("ReplaceErrors(error=", "not Name"),
    ("rules.ReplaceErrors(error=1)", "not Name"),
    ("ReplaceErrors(eror=1)", "unexpected keyword argument 'eror'"),
    ("CoordinatorErrorOnce(api='Fetch')", "api must be one of"),
])
def test_a_broken_proxy_rule_is_one_error_naming_it(text: str, message: str | None) -> None:
    if message is None:
        parse_rule(text)
        return
    with pytest.raises(KctsError, match=message):
        parse_rule(text)


class _Config:
    """What behind_replay reads of a pytest config: its options."""

    def __init__(self, **options: Any) -> None:
        self.options = options

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)


def _inner() -> Cluster:
    """A stand-in for the session's cluster: the proxied one only keeps it (and its target) until started."""
    return cast(Cluster, SimpleNamespace(target=None))


def test_rules_named_on_the_command_line_add_up_in_front_of_the_cluster() -> None:
    inner = _inner()
    assert behind_replay(_Config(), inner) is inner, "no option: the cluster as it is"
    cluster = behind_replay(_Config(allowed="not-leader-once", proxy_rule=["Throttle(api='Fetch', ms=50)"],
                                    replay="kfake-fenced-unset-current-epoch"), inner)
    assert isinstance(cluster, ProxiedCluster) and cluster.inner is inner
    names = [type(r).__name__ for r in cluster.rules]
    assert names == ["FenceUnsetCurrentEpoch", "NotLeaderOnce", "NotLeaderOnce", "NotLeaderOnce", "Throttle"]
    assert "allowed not-leader-once (Kafka protocol guide" in cluster.label
    assert "--proxy-rule Throttle(api='Fetch', ms=50)" in cluster.label


@pytest.mark.parametrize(("options", "message"), [
    ({"allowed": "no-such-item"}, "no such item in harness/allowed.toml"),
    ({"allowed": "epochs-that-skip-numbers"}, "not staged: the epoch is written"),
    ({"proxy_rule": ["NoSuchRule()"]}, "no rule of"),
    ({"replay": "no-such-replay"}, "no such replay"),
])
def test_a_bad_option_is_a_usage_error(options: dict[str, Any], message: str) -> None:
    with pytest.raises(pytest.UsageError, match=message):
        behind_replay(_Config(**options), _inner())


# -- the runner -------------------------------------------------------------------------------------
def _item(staged: bool = True) -> Allowed:
    rules = (RuleSpec("Throttle", (("api", "Fetch"),)),) if staged else ()
    return Allowed("one", "a behaviour", "KIP-1, Proposed Changes", "It may.", rules, ("suites/smoke",),
                   how="" if staged else "the brokers hold that state")


def _run(*cells: str, run_dir: Path = Path("/r/allowed-one")) -> Run:
    checks = tuple(CheckVerdict(f"suites/x.py::test_{i}", c, (), f"{c.upper()}: why\nmore")
                   for i, c in enumerate(cells))
    return Run(run_dir, 0, 12.0, checks)


def test_an_item_is_ok_only_with_no_fail_and_no_error() -> None:
    ok = runner.AllowedOutcome(_item(), _run("pass", "pass", "not-supported", "target-refused", "client-gap",
                                             "skipped"))
    assert ok.ok and ok.judged == pytest.approx(4 / 6)
    assert ok.render() == ("OK      one: 2 pass, 0 fail, 0 error, 1 not-supported, 1 refused, 1 client-gap, "
                           "1 skipped; judged 67%; 12 s; /r/allowed-one")
    for broken in ("fail", "error"):
        outcome = runner.AllowedOutcome(_item(), _run("pass", broken))
        assert not outcome.ok and outcome.render().startswith("BROKEN  one: 1 pass")
        assert [c.nodeid for c in outcome.broken] == ["suites/x.py::test_1"]
        assert f"- {broken.upper()} `suites/x.py::test_1`: {broken.upper()}: why\n" in outcome.details()
    assert not runner.AllowedOutcome(_item(), Run(Path("/r"), 3, 1.0, None)).ok, "no results.json is no verdict"
    assert "(no check ran)" in runner.AllowedOutcome(_item(), _run()).render()
    assert runner.AllowedOutcome(_item(staged=False), None).render() == "NOT STAGED  one: the brokers hold that state"


def test_an_item_runs_as_a_kcts_run_with_its_output_in_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def kcts_run(cmd: list[str], stdout: Any = None, stderr: Any = None) -> int:
        calls.append(cmd)
        assert stderr is subprocess.STDOUT
        stdout.write("pytest says a lot\nproxy rule: Throttle(Fetch, fired 3x, every answer ThrottleTimeMs 100)\n")
        run_dir = Path(cmd[cmd.index("--reports-dir") + 1]) / cmd[cmd.index("--run-id") + 1]
        (run_dir / "results.json").write_text(json.dumps({"checks": [
            {"nodeid": "suites/smoke/test_smoke.py::test_a", "cell": "pass", "promises": [], "reason": ""},
            {"nodeid": "suites/smoke/test_smoke.py::test_b", "cell": "error", "promises": [], "reason": "boom\nx"}]}))
        return 1

    monkeypatch.setattr("harness.replay.subprocess.call", kcts_run)
    outcome = runner.run_one(_item(), "allowed-one-t", tmp_path, "4.4.0", ["-x"])
    (cmd,) = calls
    assert cmd[:3] == [sys.executable, "-m", "harness.cli"] and cmd[cmd.index("--allowed") + 1] == "one"
    assert cmd[-2:] == ["suites/smoke", "-x"]
    log = (tmp_path / "allowed-one-t" / runner.LOG).read_text()
    assert log.startswith("kcts allowed: one: kcts run --kafka-version 4.4.0") and "pytest says a lot" in log
    assert not outcome.ok and outcome.cells == {"pass": 1, "error": 1}
    details = (tmp_path / "allowed-one-t" / runner.DETAILS).read_text()
    assert "- ERROR `suites/smoke/test_smoke.py::test_b`: boom" in details and "- quote: \"It may.\"" in details
    assert "- proxy rule: Throttle(Fetch, fired 3x" in details, "how often each rule acted"


def test_an_unstaged_item_is_not_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("harness.replay.subprocess.call", lambda *a, **k: pytest.fail("ran"))
    assert runner.run_one(_item(staged=False), "x", tmp_path, "4.4.0", []).run is None


def test_the_list_names_every_item_with_its_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert runner.main(["--list"]) == 0
    out = capsys.readouterr().out
    for a in load().values():
        assert f"{a.id}: " in out and a.source in out
    assert "not staged: the epoch is written" in out
