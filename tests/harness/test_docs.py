"""The README and docs/ cannot rot quietly: every relative link reaches a file (and its heading), and
every `kcts COMMAND` they quote is a command whose --help takes the options quoted with it."""

from __future__ import annotations

import contextlib
import io
import re
from functools import cache
from pathlib import Path

import pytest

from harness import layout

ROOT = layout.ROOT
HARNESS = Path(layout.__file__).resolve().parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "reports" / "findings" / "README.md"])
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
# Commands that hand options they do not know on (to pytest, or to the target's parser): their own
# --help cannot vouch for every option quoted with them.
PASS_ON = ("run", "matrix", "soak", "cluster")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped,
    spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^    .*$", "", page.read_text(), flags=re.M)  # a `# comment` in a code block is no heading
    return {slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def code_of(page: Path) -> list[str]:
    """The page's code: indented blocks' lines and inline `spans`."""
    text = page.read_text()
    return [ln for ln in text.splitlines() if ln.startswith("    ")] + re.findall(r"`([^`\n]+)`", text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_readme_fits_on_a_screen() -> None:
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= 150, f"README.md has {lines} lines; move the detail to docs/ (at most 150)"


@cache
def help_of(command: str) -> str:
    from harness.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([command, "--help"])
    return out.getvalue()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_quoted_kcts_command_is_accepted_by_its_help(page: Path) -> None:
    from harness.cli import COMMANDS

    wrong = []
    for code in code_of(page):
        for m in re.finditer(r"(?<![\w/.-])kcts ([a-z][\w-]*)([^#|&;]*)", code):
            command, rest = m[1], m[2]
            if command not in COMMANDS:
                wrong.append(f"`kcts {command}`: no such command")
            elif command not in PASS_ON:
                wrong += [f"`kcts {command} {flag}`: not in its --help" for flag in re.findall(r"--[\w-]+", rest)
                          if flag not in help_of(command)]
    assert not wrong, f"{page.relative_to(ROOT)}: " + "; ".join(sorted(set(wrong)))


def test_the_readme_counts_what_the_catalogues_hold() -> None:
    """The promise count and the replay count of the README are the catalogues' own, so neither can go
    stale when a promise or a replay is added."""
    import tomllib

    readme = (ROOT / "README.md").read_text()
    replays = len(tomllib.loads((HARNESS / "replays.toml").read_text())["replay"])
    promises = len(tomllib.loads((HARNESS / "promises.toml").read_text())["promise"])
    caught = set(re.findall(r"catches (\d+) of (\d+) documented bugs", readme))
    assert caught == {(str(replays), str(replays))}, f"README says {caught}; harness/replays.toml holds {replays}"
    said = set(re.findall(r"of the (\d+) promises in `harness/promises.toml`", readme))
    assert said == {str(promises)}, f"README says {said} promises; harness/promises.toml holds {promises}"
