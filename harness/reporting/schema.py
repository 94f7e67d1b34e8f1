"""The published format of `results.json` (`results.schema.json` beside this file), and its check.

    python -m harness.reporting.schema reports/*/results.json   # exit 1 naming the first file that breaks it
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from harness.errors import KctsError

SCHEMA = Path(__file__).with_name("results.schema.json")


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())


def problems(data: object) -> list[str]:
    """Every way `data` breaks the schema, each as "at PATH: what"; empty when it validates."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        if err.context:  # a oneOf: the alternative that came closest says what is wrong
            err = jsonschema.exceptions.best_match(err.context)
        where = "/".join(str(p) for p in err.absolute_path) or "(top)"
        out.append(f"at {where}: {err.message}")
    return out


def check_file(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise KctsError(f"cannot read {path}: {exc}") from None
    return problems(data)


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: python -m harness.reporting.schema results.json...", file=sys.stderr)
        return 2
    bad = 0
    for path in paths:
        try:
            found = check_file(path)
        except KctsError as exc:
            print(f"kcts: error: {exc}", file=sys.stderr)
            return 2
        if found:
            bad += 1
            print(f"{path}: does not match {SCHEMA.name}: " + "; ".join(found[:5]), file=sys.stderr)
    print(f"kcts: {len(paths) - bad} of {len(paths)} results.json file(s) match the published schema")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
