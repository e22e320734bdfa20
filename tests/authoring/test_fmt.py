"""``formulane fmt`` (formulane.authoring.fmt): stdin, files, --check, --write, as a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from formulane.authoring.documents import format_document

LONG = ('IF(AND(order.total > 1000, order.customer.tier = "gold"), ROUND(order.total * 0.9, 2), '
        'order.total)')


def _fmt(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "formulane.authoring.fmt", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_stdin() -> None:
    done = _fmt(stdin="sum(1,2) /* two */")
    assert (done.returncode, done.stdout) == (0, "SUM(1, 2) /* two */\n")
    broken = _fmt(stdin="SUM(1,")
    assert broken.returncode == 1 and "error[E102]" in broken.stderr


def test_files_check_and_write(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(f"rules:\n  - formula: {LONG}\n  - formula: 'sum(1,2)'\n"
                     "  - expr: if(a,1,)\n", "utf-8")
    single = tmp_path / "calc.formula"
    single.write_text("a==b\n", "utf-8")
    data = tmp_path / "rules.json"
    data.write_text('{"formula": "upper( name )"}', "utf-8")
    check = _fmt("--check", str(tmp_path))
    assert check.returncode == 1
    assert check.stderr.count("would reformat") == 3
    shown = _fmt(str(single))
    assert shown.stdout == "a = b\n" and single.read_text() == "a==b\n"
    wrote = _fmt("--write", "--field", "formula", "--field", "expr", str(tmp_path))
    assert wrote.returncode == 0, wrote.stderr
    assert single.read_text() == "a = b\n"
    assert data.read_text() == '{"formula": "UPPER(name)"}'
    loaded = yaml.safe_load(rules.read_text())
    assert loaded["rules"][0]["formula"].startswith("IF(\n  AND(")
    assert loaded["rules"][1]["formula"] == "SUM(1, 2)"
    assert loaded["rules"][2]["expr"] == "IF(a, 1, )"
    assert _fmt("--check", "--field", "formula", "--field", "expr", str(tmp_path)).returncode == 0


def test_broken_formulas_are_left_alone(tmp_path: Path) -> None:
    text = "a:\n  formula: SUM(1,\nb:\n  formula: sum(2)\n"
    formatted, problems = format_document(text, "yaml")
    assert formatted == "a:\n  formula: SUM(1,\nb:\n  formula: SUM(2)\n"
    assert len(problems) == 1 and problems[0][0].key == "a.formula"
    path = tmp_path / "x.yaml"
    path.write_text(text, "utf-8")
    done = _fmt("--write", str(path))
    assert done.returncode == 1 and "a.formula" in done.stderr
    assert path.read_text() == formatted


def test_usage_errors(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("x")
    assert _fmt(str(other)).returncode == 2
    assert _fmt("--width", "0", str(other)).returncode == 2
    assert _fmt("--bogus").returncode == 2


def test_yaml_without_pyyaml_says_what_to_install(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("formula: sum(1,2)\n", "utf-8")
    # PyYAML made unimportable in the child process (as on an install without the lsp extra).
    code = ("import sys; sys.modules['yaml'] = None; from formulane.authoring.fmt import main; "
            f"sys.exit(main(['--check', {str(rules)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "PyYAML" in done.stderr
