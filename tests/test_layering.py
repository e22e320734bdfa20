"""Dependencies point one way (DESIGN.md; issue 10, item 1): checked import by import.

Every module under src/formulane is parsed (never imported). Two rules:

- ``functions/`` (declarations and scalar code) imports nothing but the base layer
  (``errors``, ``source``, ``types``, ``values``, ``limits``, ``runtime``): not ``interpreter/``,
  the columnar backends (``columnar/``), the facade (``formulane``) or any
  other package;
- no module imports through a string (``importlib.import_module``, ``__import__``,
  ``LazyModule("...")``): an import no tool can follow.

The columnar forms live in ``columnar/forms/`` (issue 10); `DEBT` lists what each rule still
meets today, each with its reason. A new violation fails; so does an entry of `DEBT` that is
gone (delete it: the list only shrinks).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
UPWARD = ("formulane.interpreter", "formulane.columnar")
STRING_IMPORTS = ("import_module", "__import__", "LazyModule")
#: What ``functions/`` may import from the package: the base layer and itself.
BELOW = tuple(f"formulane.{m}" for m in (
    "errors", "source", "types", "values", "limits", "runtime", "functions"))

#: (rule, importing module, imported module or call text): what the migration still has to move
DEBT: frozenset[tuple[str, str, str]] = frozenset({
    # `with_host_functions` runs a host function's examples through the engine (the facade's
    # `evaluate`, imported inside the function): the check every builtin's examples get, which
    # needs the whole interpreter. Moving it out of `functions/` would change the public
    # `formulane.functions.host` API; kept, the one upward import left.
    ("upward", "formulane.functions.host", "formulane"),
    ("string", "formulane.mcp", "import_module"),
    # `formulane serve --tools module:attr` loads the application's registry by its name, as
    # `formulane mcp` does: configuration, not an internal import.
    ("string", "formulane.api.service", "import_module"),
})


def _module_name(path: Path) -> tuple[str, str]:
    parts = path.relative_to(SRC).with_suffix("").parts
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    return module, package


def _resolve(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def violations() -> set[tuple[str, str, str]]:
    found = set()
    for path in sorted((SRC / "formulane").rglob("*.py")):
        module, package = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                targets.append(_resolve(node, package))
            elif isinstance(node, ast.Import):
                targets += [a.name for a in node.names]
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else \
                    getattr(func, "id", "")
                if name in STRING_IMPORTS:
                    found.add(("string", module, name))
            if not module.startswith("formulane.functions"):
                continue
            for target in targets:
                if target == "formulane" or target.startswith(UPWARD) or (
                        target.startswith("formulane.") and not target.startswith(BELOW)):
                    found.add(("upward", module, target))
    return found


def test_imports_point_one_way() -> None:
    found = violations()
    new = sorted(found - DEBT)
    gone = sorted(DEBT - found)
    assert not new, "imports against the layering rules (see the module docs):\n" + \
        "\n".join(f"  {rule}: {module} -> {target}" for rule, module, target in new)
    assert not gone, "fixed, so delete from DEBT:\n" + \
        "\n".join(f"  {rule}: {module} -> {target}" for rule, module, target in gone)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The parser-based check catches both kinds (so the test above can fail)."""
    source = ("from ..interpreter import ir\nimport importlib\n"
              "importlib.import_module('formulane.columnar.polars.kit')\n")
    tree = ast.parse(source)
    kinds = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if _resolve(node, "formulane.functions").startswith(UPWARD):
                kinds.add("upward")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in STRING_IMPORTS:
            kinds.add("string")
    assert kinds == {"upward", "string"}
