"""The project's Python sources as the tests that read the code see them, each file parsed once per
process: the layers, the waits, the target kinds and the client factories walk the same 400 files,
and parsing them again in each test cost a test process about 10 CPU-s. The trees are shared: read
them, never change them."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


@cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file, in `ast.walk`'s order."""
    return tuple(ast.walk(tree(path)))
