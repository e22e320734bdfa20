"""Write the `ironcalc` conformance suite from IronCalc's Excel-computed test workbooks.

IronCalc (github.com/ironcalc/IronCalc, MIT OR Apache-2.0) keeps workbooks under
`xlsx/tests/calc_tests/` that were saved by Microsoft Excel: every formula cell carries the value
Excel computed for it. This script reads them with openpyxl (formulas, and Excel's cached values)
and writes one fact per formula cell: the formula with its cell references replaced by the
values of the cells they point at, and Excel's value as the expectation. No IronCalc code is
used or copied; the engine under test is never run here.

    python tests/conformance/extract_ironcalc.py PATH/TO/IronCalc COMMIT

Translation rules (also in README.md):
- a single-cell reference becomes the literal of that cell's value (a constant, or Excel's cached
  value when the cell holds a formula); an empty cell is `BLANK()`; a date-formatted cell is its
  serial number (what Excel stores); an error cell is `NA()`, `(1/0)`, `SQRT(-1)` or
  `VALUE("x")` (#N/A, #DIV/0!, #NUM!, #VALUE!); other errors drop the case;
- a range becomes an array constant `{a,b;c,d}` (rows by `;`), or a list literal `[...]` holding
  `BLANK()` when a cell of the range is empty or holds an error;
- `_xlfn.`/`_xlws.` prefixes are removed; cases with array formulas (spills), whole-column or
  whole-row ranges, defined names, volatile or undeclared functions are left out and counted;
- a formula cell whose cached value is empty holds the text "" (a formula cannot give a blank);
- the expectation is Excel's cached value: a number (compared to 9 significant digits, see
  README.md), a text, a logical, an error code; a date-formatted result is its serial number.
- at most PER_BOOK cases per workbook, evenly spaced over its formula cells (one workbook holds
  50,000 trigonometry cells; the sample keeps every workbook's weight comparable);
- every fourth case (by a hash of its id) is marked `heldout: true`: the held-out slice is
  measured, never looked at while fixing the engine.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import openpyxl
import yaml
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.utils.datetime import to_excel

import formulane

HERE = Path(__file__).parent
ROOT = "xlsx/tests/calc_tests"
LICENCE = "MIT OR Apache-2.0"
PER_BOOK = 30
GROUPS = {"DATABASE": "database", "DATE_AND_TIME": "dates", "ENGINEERING": "engineering",
          "FINANCIAL": "financial", "INFORMATION": "information", "LOGICAL": "logical",
          "LOOKUP_AND_REFERENCE": "lookup", "MATH_AND_TRIGONOMETRY": "math",
          "STATISTICAL": "statistics", "TEXT": "text"}
VOLATILE = {"NOW", "TODAY", "RAND", "RANDBETWEEN", "RANDARRAY", "CELL", "INFO", "INDIRECT",
            "OFFSET", "ROW", "COLUMN", "ROWS", "COLUMNS", "SHEET", "SHEETS", "ISREF",
            "ISFORMULA", "FORMULATEXT", "ADDRESS", "AREAS"}
ERROR_LITERALS = {"#N/A": "NA()", "#DIV/0!": "(1/0)", "#NUM!": "SQRT(-1)", "#VALUE!": 'VALUE("x")'}
ERRORS = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#CALC!",
          "#SPILL!", "#GETTING_DATA"}
_STRING = re.compile(r'"(?:[^"]|"")*"')
_CELL = r"\$?([A-Z]{1,3})\$?([0-9]+)"
_REF = re.compile(
    r"(?<![\w.$])(?:(?:'(?P<qsheet>[^']+)'|(?P<sheet>[A-Za-z_][\w.]*))!)?" + _CELL
    + r"(?::" + _CELL + r")?(?![\w(!.])")
_COLRANGE = re.compile(r"(?<![\w.])\$?[A-Z]{1,3}:\$?[A-Z]{1,3}(?![\w(])|(?<![\w.])\$?\d+:\$?\d+(?![\w(])")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
_NAME = re.compile(r"(?<![\w.\"'])([A-Za-z_][\w.]*)(?![\w.(!])")


class Skip(Exception):
    """This cell cannot be translated; the message is the reason (counted)."""


def _number(x: float | int) -> str:
    if isinstance(x, bool):
        raise TypeError
    if isinstance(x, int) or float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def _value(cell: Any, values: Any) -> tuple[str, Any]:
    """(kind, value) of a cell as Excel stored it: number, text, bool, error, blank. A formula
    cell (`values` given) never holds a blank: its empty cached value is the text ""."""
    stored = values[cell.coordinate] if values is not None else cell
    v = stored.value
    if v is None:
        return ("text", "") if values is not None else ("blank", None)
    if stored.data_type == "e" or (isinstance(v, str) and v in ERRORS
                                   and stored.data_type != "s"):
        return "error", v
    if isinstance(v, bool):
        return "bool", v
    if isinstance(v, (dt.datetime, dt.date, dt.time, dt.timedelta)):
        return "number", to_excel(v)
    if isinstance(v, (int, float)):
        return "number", v
    # xlsx writes control characters as _xHHHH_ (ECMA-376 ST_Xstring); openpyxl leaves them
    return "text", re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m.group(1), 16)), str(v))


def _literal(kind: str, v: Any, in_list: bool = False) -> str:
    if kind == "blank":
        return "BLANK()"
    if kind == "number":
        return _number(v)
    if kind == "bool":
        return "TRUE" if v else "FALSE"
    if kind == "text":
        return '"' + v.replace('"', '""') + '"'
    if v in ERROR_LITERALS:
        return ERROR_LITERALS[v]
    raise Skip(f"error literal {v}")


class Book:
    def __init__(self, path: Path) -> None:
        self.formulas = openpyxl.load_workbook(path, data_only=False)
        self.values = openpyxl.load_workbook(path, data_only=True)

    def cell(self, sheet: str, col: str, row: str) -> tuple[str, Any]:
        if sheet not in self.formulas.sheetnames:
            raise Skip("unknown sheet")
        ws = self.formulas[sheet]
        c = ws[f"{col}{row}"]
        if isinstance(c.value, str) and c.value.startswith("=") or not isinstance(
                c.value, (str, int, float, bool, dt.datetime, dt.date, dt.time, type(None))):
            return _value(c, self.values[sheet])  # a formula cell: Excel's cached value
        return _value(c, None)

    def ref(self, sheet: str, m: re.Match[str]) -> str:
        sheet = m["qsheet"] or m["sheet"] or sheet
        c1, r1 = m.group(3), m.group(4)
        if m.group(5) is None:
            return _literal(*self.cell(sheet, c1, r1))
        c2, r2 = m.group(5), m.group(6)
        cols = range(column_index_from_string(c1), column_index_from_string(c2) + 1)
        rows = range(int(r1), int(r2) + 1)
        if len(cols) * len(rows) > 400:
            raise Skip("range over 400 cells")
        grid = [[self.cell(sheet, get_column_letter(c), str(r)) for c in cols] for r in rows]
        flat = [k for row in grid for k, _ in row]
        if "blank" in flat or "error" in flat and any(
                v != "#N/A" for row in grid for k, v in row if k == "error"):
            # a list literal may hold blanks and computed errors; a constant may not
            items = [[_literal(k, v, True) for k, v in row] for row in grid]
            if len(rows) == 1 or len(cols) == 1:
                return "[" + ", ".join(i for row in items for i in row) + "]"
            return "[" + ", ".join("[" + ", ".join(row) + "]" for row in items) + "]"
        lits = [[("#N/A" if k == "error" else _literal(k, v)) for k, v in row] for row in grid]
        if len(rows) * len(cols) == 1:
            return lits[0][0]
        return "{" + ";".join(",".join(row) for row in lits) + "}"


# Microsoft documents these as iterated "until the result is accurate within 0.000001 percent"
# (XIRR, IRR, RATE pages): their cases compare to 1e-8, not to 9 significant digits.
ITERATIVE = {"XIRR", "IRR", "RATE", "YIELD"}

# Excel skips texts, logicals and empty cells that a reference brings into these functions, but
# not the same values written as arguments: a referenced cell there becomes a one-item list.
SKIPPING = {"SUM", "SUMSQ", "PRODUCT", "AVERAGE", "MIN", "MAX", "COUNT", "COUNTA", "VAR", "VAR.S",
            "VAR.P", "VARP", "STDEV", "STDEV.S", "STDEV.P", "STDEVP", "MEDIAN", "MODE",
            "MODE.SNGL", "AVEDEV", "DEVSQ", "GEOMEAN", "HARMEAN", "KURT", "SKEW", "SKEW.P", "NPV",
            "SMALL", "LARGE", "PERCENTILE", "PERCENTILE.INC", "PERCENTILE.EXC", "QUARTILE",
            "QUARTILE.INC", "QUARTILE.EXC", "COUNTBLANK", "MAXA", "MINA", "AVERAGEA"}


def _enclosing(masked: str, at: int) -> str:
    """The name of the innermost call around position `at` ("" at the top level)."""
    depth = 0
    for i in range(at - 1, -1, -1):
        ch = masked[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                m = re.search(r"([A-Za-z_][\w.]*)\s*$", masked[:i])
                return m.group(1).upper() if m else ""
            depth -= 1
    return ""


def translate(book: Book, sheet: str, text: str, known: set[str],
              used: set[str] | None = None) -> str:
    body = text[1:] if text.startswith("=") else text
    body = re.sub(r"_xl(?:fn|ws|udf)\.", "", body)
    body = body.replace("_xlpm.", "")
    if _REF.fullmatch(body.strip().lstrip("+")):
        raise Skip("a bare reference (implicit intersection or spill)")
    masked = _STRING.sub(lambda m: '"' + "_" * (len(m.group()) - 2) + '"', body)
    if "[" in masked or "#" in masked.replace("#N/A", "") or _COLRANGE.search(masked):
        raise Skip("structured, spill or whole-column reference")
    for name in _CALL.findall(masked):
        upper = name.upper()
        if upper in VOLATILE:
            raise Skip("volatile or reference function")
        if upper not in known and upper not in {"LAMBDA", "LET"}:
            raise Skip(f"undeclared function {upper}")
        if used is not None:
            used.add(upper)
    lambdas = "LAMBDA" in masked.upper() or "LET(" in masked.upper()
    out = []
    last = 0
    for m in _REF.finditer(masked):
        out.append(body[last:m.start()])
        literal = book.ref(sheet, m)
        one_cell = m.group(5) is None or (m.group(3), m.group(4)) == (m.group(5), m.group(6))
        if one_cell and _enclosing(masked, m.start()) in SKIPPING and not (
                literal.startswith("{") or literal[:1].isdigit() or literal[:1] == "-"):
            literal = f"[{literal}]"
        out.append(literal)
        last = m.end()
    out.append(body[last:])
    rest = _REF.sub("", re.sub(r"\{[^}]*\}", "", masked))
    for name in _NAME.findall(rest):
        if name.upper() not in {"TRUE", "FALSE"} and not re.fullmatch(r"[\d.eE+-]+", name) \
                and not lambdas:
            raise Skip("defined name")
    return "".join(out)


def expectation(kind: str, v: Any) -> Any:
    if kind == "error":
        return {"error": v}
    if kind == "number":
        return v if isinstance(v, int) or not float(v).is_integer() else int(v)
    if kind == "blank":
        raise Skip("blank result")
    return v


def extract(repo: Path, commit: str) -> tuple[dict[str, list[dict[str, Any]]], Counter[str]]:
    registry = formulane.default_registry().with_packs("finance")
    known = {s.name for s in registry.functions()}
    for s in registry.functions():
        known.update(getattr(s, "aliases", ()))
    finance = {s.name for s in registry.functions() if s.pack == "finance"}
    groups: dict[str, list[dict[str, Any]]] = {}
    skipped: Counter[str] = Counter()
    for path in sorted((repo / ROOT).rglob("*.xlsx")):
        rel = path.relative_to(repo).as_posix()
        parts = path.relative_to(repo / ROOT).parts
        group = GROUPS.get(parts[0], "misc") if len(parts) > 1 else "misc"
        book = Book(path)
        mine: list[dict[str, Any]] = []
        for ws in book.formulas.worksheets:
            for row in ws.iter_rows():
                for cell in row:
                    f = cell.value
                    if not (isinstance(f, str) and f.startswith("=")):
                        if f is not None and not isinstance(f, (str, int, float, bool,
                                                                dt.datetime, dt.date, dt.time)):
                            skipped["array formula (spill)"] += 1
                        continue
                    try:
                        kind, value = _value(cell, book.values[ws.title])
                        if kind == "text" and value == f:
                            raise Skip("a text cell that shows a formula")
                        want = expectation(kind, value)
                        used: set[str] = set()
                        formula = translate(book, ws.title, f, known, used)
                    except Skip as why:
                        reason = str(why)
                        skipped[reason if not reason.startswith("undeclared")
                                else "undeclared function"] += 1
                        continue
                    cid = f"ironcalc.{path.stem.lower()}.{ws.title.lower().replace(' ', '_')}." \
                          f"{cell.coordinate.lower()}"
                    case: dict[str, Any] = {
                        "id": cid,
                        "source": f"https://github.com/ironcalc/IronCalc/blob/{commit}/{rel} "
                                  f"sheet {ws.title!r} cell {cell.coordinate} (value computed by "
                                  f"Excel; {LICENCE})",
                        "profile": "excel", "formula": formula, "expect": want,
                        "match": "excel", "excel": f,
                    }
                    if isinstance(want, (int, float)) and used & ITERATIVE:
                        case["tolerance"] = 1e-8
                    if used & finance:
                        case["packs"] = ["finance"]
                    if int(hashlib.sha256(cid.encode()).hexdigest(), 16) % 4 == 0:
                        case["heldout"] = True
                    mine.append(case)
        if len(mine) > PER_BOOK:  # evenly spaced, so every table of the workbook is sampled
            skipped["sampled out (over %d per workbook)" % PER_BOOK] += len(mine) - PER_BOOK
            mine = [mine[i * len(mine) // PER_BOOK] for i in range(PER_BOOK)]
        groups.setdefault(group, []).extend(mine)
    return groups, skipped


HEADER = """\
# Excel-computed facts from IronCalc's test workbooks ({group}).
#
# Source: github.com/ironcalc/IronCalc at commit {commit}, {root}/ (licence: {licence}); the
# workbooks were saved by Microsoft Excel, so every expectation is the value Excel computed and
# cached in the file. Generated by extract_ironcalc.py (translation rules in its docstring and in
# README.md); `excel:` keeps the cell's original formula. Cases marked `heldout: true` form the
# held-out slice. Cases the engine answers differently carry `bug:` (xfailed, FINDINGS.md) or
# `divergence:`; both count as failures in bench/CONFORMANCE.md.
"""


def main() -> None:
    repo, commit = Path(sys.argv[1]), sys.argv[2]
    groups, skipped = extract(repo, commit)
    for group, cases in sorted(groups.items()):
        out = HERE / f"ironcalc_{group}.yaml"
        text = HEADER.format(group=group, commit=commit, root=ROOT, licence=LICENCE)
        text += yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=100)
        out.write_text(text, encoding="utf-8")
    total = sum(len(c) for c in groups.values())
    print(f"{total} cases in {len(groups)} files; left out: {dict(skipped.most_common())}")


if __name__ == "__main__":
    main()
