"""What each SQL dialect can run of what the forms write; a program that needs more is refused.

The SQL compiler writes one sqlglot tree for every dialect and sqlglot renders it; most of it
transpiles (CASE, CAST, arithmetic, string and date functions sqlglot knows). Two kinds of
construct do not: array lambdas (`LIST_FILTER(xs, x -> ...)`: DuckDB, Spark, Trino and
Snowflake have them; PostgreSQL, SQLite and BigQuery do not) and engine functions sqlglot does
not know, which it passes through by name (`exp.Anonymous`: DuckDB's `LIST_SUM`, `RANGE`,
`TO_MICROSECONDS`...). Rendered for an engine that lacks them, the query would fail in the
engine, which the columnar contract forbids ("no foreign exception", docs/columnar.md); so
`refuse_unportable` walks the finished trees and raises `Unsupported` (E213) naming the
construct. What each dialect has is data here, one table: PostgreSQL's entry is checked by
executing every golden case on a PostgreSQL server (tests/test_backends_postgres.py), SQLite's
by executing the golden cases and the function families' cases over columns on the standard
library's SQLite (tests/test_backends_sqlite.py); DuckDB and Spark are executed too; Trino,
Snowflake and BigQuery are rendered, not executed, and their entries say only what their
documentation says they lack.

Some constructs sqlglot renders for SQLite under a name or an operator whose meaning differs
there: `%` is an integer remainder in SQLite (`5.5 % 2` is 1), `EXTRACT`, `LEFT`, `RIGHT`,
`STARTS_WITH`, `ENDS_WITH` and `CONTAINS` do not exist. `adapt` rewrites those into SQLite's own
functions (`MOD`, `STRFTIME`, `SUBSTR`, `INSTR`) before the refusal check, so one tree serves.
PostgreSQL likewise: no `%` for DOUBLE PRECISION, no BIGINT counts for SUBSTRING/LEFT/RIGHT, no
ENDS_WITH/CONTAINS, and `\\x{HH}` is no escape in its regular expressions. Spark: DATE_ADD takes an
INT count of days only, string functions INT counts; FLOOR/CEIL of a DOUBLE is a BIGINT (which a
huge value overflows), `[]` is 0-based and fails out of range, LN is NULL at 0, Java writes a
double's exponent "E", and its regular expressions' replacements and case folding have their own
syntax: `_spark_node` rewrites each (checked by executing the function families' cases over
columns on local Spark, tests/test_backends_spark_families.py). Where the tree cannot say what
the rewrite needs (that an operand is a DOUBLE), the form marks the node (`marked`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlglot import exp

from ...errors import Unsupported
from ...source import Span
from . import pg_float, spark_lists

#: Dialects with array lambdas (sqlglot renders `exp.Lambda` for them).
LAMBDA_DIALECTS = frozenset({"duckdb", "spark", "trino", "snowflake"})

#: Functions the forms call by name (sqlglot passes them through unchanged) that only DuckDB
#: has: refused on every other dialect. (`LIST_*` too, by prefix.)
DUCKDB_ONLY = frozenset({"RANGE", "TO_MICROSECONDS", "STRING_SPLIT", "REGEXP_FULL_MATCH",
                         "NFC_NORMALIZE", "REGEXP_ESCAPE", "LEN", "FLATTEN", "UNICODE"})

#: Dialects whose functions are listed exhaustively: a name called by a form and missing from
#: the list is refused. PostgreSQL's is what its catalog (`pg_proc`) and grammar (GREATEST,
#: LEAST, COALESCE, NULLIF are keywords there) have among the names the forms call, checked
#: against a server by tests/test_backends_postgres.py.
KNOWN_FUNCTIONS: dict[str, frozenset[str]] = {
    "postgres": frozenset({
        "ABS", "ARRAY_TO_STRING", "CARDINALITY", "CHR", "COALESCE", "EXP", "FLOOR", "GREATEST",
        "LEAST", "LEFT", "LENGTH", "LN", "LOG10", "LPAD", "LTRIM", "MOD", "NULLIF", "POW",
        "REGEXP_REPLACE", "REPLACE", "REVERSE", "RIGHT", "RPAD", "RTRIM", "SIGN", "SPLIT_PART",
        "SQRT", "STARTS_WITH", "STRPOS", "SUBSTRING", "TANH", "TRANSLATE", "TRUNC"}),
    # SQLite's core, math (3.35+, on in its standard builds and in CPython's) and date
    # functions (https://sqlite.org/lang_corefunc.html, lang_mathfunc.html, lang_datefunc.html)
    # as of 3.35: a newer one (CONCAT, 3.44) would fail on an older SQLite
    "sqlite": frozenset({
        "ABS", "ACOS", "ACOSH", "ASIN", "ASINH", "ATAN", "ATAN2", "ATANH", "CEIL", "CEILING",
        "CHAR", "COALESCE", "COS", "COSH", "DATE", "DATETIME", "DEGREES", "EXP", "FLOOR",
        "GLOB", "HEX", "IFNULL", "IIF", "INSTR", "JULIANDAY", "LENGTH", "LIKE", "LN", "LOG",
        "LOG10", "LOG2", "LOWER", "LTRIM", "MAX", "MIN", "MOD", "NULLIF", "PI", "POW", "POWER",
        "PRINTF", "QUOTE", "RADIANS", "REPLACE", "ROUND", "RTRIM", "SIGN", "SIN", "SINH",
        "SQRT", "STRFTIME", "SUBSTR", "SUBSTRING", "TAN", "TANH", "TIME", "TRIM", "TRUNC",
        "TYPEOF", "UNICODE", "UPPER"}),
}

#: Functions sqlglot knows but renders, for these dialects, under a name the engine lacks.
UNRENDERED: dict[str, dict[type[exp.Expr], str]] = {
    "postgres": {exp.DateFromParts: "DATE_FROM_PARTS", exp.RegexpExtractAll: "REGEXP_EXTRACT_ALL",
                 exp.RegexpExtract: "REGEXP_EXTRACT", exp.DayOfYear: "DAY_OF_YEAR",
                 exp.WeekOfYear: "WEEK_OF_YEAR", exp.UnixMicros: "UNIX_MICROS"},
    # SQLite has no regular expressions (its REGEXP operator calls an application-defined
    # function), no arrays, no time zones and no week numbers
    "sqlite": {exp.RegexpLike: "regular expressions (REGEXP)",
               exp.RegexpILike: "regular expressions (REGEXP)",
               exp.RegexpReplace: "regular expressions (REGEXP_REPLACE)",
               exp.RegexpExtract: "regular expressions (REGEXP_EXTRACT)",
               exp.RegexpExtractAll: "regular expressions (REGEXP_EXTRACT_ALL)",
               exp.RegexpSplit: "regular expressions (REGEXP_SPLIT)",
               exp.Array: "arrays (ARRAY)", exp.AtTimeZone: "time zones (AT TIME ZONE)",
               exp.WeekOfYear: "week numbers (WEEK_OF_YEAR)"},
}

#: Dialects without TRY_CAST (sqlglot writes CAST, which fails the query where the form
#: expects NULL). A TRY_CAST of a number's own text (`CAST(x AS VARCHAR)`, which the forms
#: guard by magnitude) cannot fail and is kept; one of any other text (Excel's reading of a
#: number in a text, `"12" + 1` in the excel profile) is refused there.
NO_TRY_CAST = frozenset({"postgres"})

#: Dialects that cannot type an empty array literal (`ARRAY[]` needs a cast there).
UNTYPED_EMPTY_ARRAY = frozenset({"postgres"})

_NAMES = {"postgres": "PostgreSQL", "sqlite": "SQLite", "bigquery": "BigQuery",
          "spark": "Spark", "trino": "Trino", "snowflake": "Snowflake", "duckdb": "DuckDB"}


def lacking(trees: Iterable[exp.Expr | None], dialect: str) -> str | None:
    """The first construct of ``trees`` that ``dialect`` lacks, described, or None."""
    if dialect == "duckdb":
        return None
    for tree in trees:
        if tree is None:
            continue
        for node in tree.walk():
            if isinstance(node, exp.Lambda) and dialect not in LAMBDA_DIALECTS:
                return "array lambdas (the list forms filter and map arrays with them)"
            unrendered = UNRENDERED.get(dialect, {}).get(type(node))
            if unrendered is not None:
                return unrendered if " " in unrendered else f"function {unrendered}"
            if dialect == "sqlite" and isinstance(node, exp.Anonymous) \
                    and node.name.upper() == "MOD" and _on_decimal_grid(node):
                # a float form's exact path (ROUNDDOWN's `x - MOD(x, 0.01)` over the number's
                # shortest decimal) counts on DECIMAL arithmetic; in REAL it misses the grid
                return "DECIMAL type (the form's remainder is exact on the decimal grid)"
            if dialect == "sqlite" and isinstance(node, exp.Cast) and node.to.is_type(
                    exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ):
                return "time zones (a zoned timestamp)"
            if dialect == "sqlite" and isinstance(node, exp.Round) \
                    and node.args.get("decimals") is not None \
                    and _integer(node.args["decimals"]) is None:
                return "ROUND to a computed number of digits (its ROUND reads negative " \
                       "digits as 0)"
            if isinstance(node, exp.TryCast) and dialect in NO_TRY_CAST \
                    and not _number_text(node.this):
                return "TRY_CAST (a text that is not a number would fail the query)"
            if dialect == "postgres" and isinstance(node, exp.Literal) and node.is_string \
                    and "\x00" in node.this:
                return "NUL characters in a text (PostgreSQL's text cannot hold one)"
            if dialect == "postgres" and isinstance(node, exp.Array) and len({
                    len(i.expressions) for i in node.expressions if isinstance(i, exp.Array)}) > 1:
                return "lists of lists of different lengths (PostgreSQL's arrays are " \
                       "rectangular)"
            if isinstance(node, exp.Array) and not node.expressions \
                    and dialect in UNTYPED_EMPTY_ARRAY:
                return "way to type an empty list (an empty ARRAY needs a declared type)"
            if isinstance(node, exp.Anonymous) and not node.meta.get(spark_lists.SPARK_OWN):
                name = node.name.upper()
                known = KNOWN_FUNCTIONS.get(dialect)
                if name.startswith("LIST_") or name in DUCKDB_ONLY or \
                        (known is not None and name not in known):
                    if dialect == "spark" and name in spark_lists.REFUSED:
                        return f"function {name} as DuckDB answers it: " \
                               f"{spark_lists.REFUSED[name]}"
                    return f"function {name} (DuckDB's; the form calls it by name)"
    return None


_INT32_MAX = 2 ** 31 - 1

#: EXTRACT's parts as SQLite's STRFTIME formats (SQLite has no EXTRACT).
_STRFTIME = {"YEAR": "%Y", "MONTH": "%m", "DAY": "%d", "HOUR": "%H", "MINUTE": "%M",
             "SECOND": "%S", "DOW": "%w", "DAYOFWEEK": "%w", "DOY": "%j", "DAYOFYEAR": "%j"}


def adapt(tree: exp.Expr | None, dialect: str) -> exp.Expr | None:
    """``tree`` with what ``dialect`` writes differently rewritten into its own functions (a
    new tree; SQLite and PostgreSQL need it). It copies: the forms share a node between the
    places that read it, and an in-place rewrite would reach only one of them."""
    rewrite = _REWRITES.get(dialect)
    if tree is None or rewrite is None:
        return tree
    root = tree.copy()
    for node in reversed(list(root.dfs())):  # children first: a rewrite keeps them rewritten
        new = rewrite(node)
        if new is not node:
            if node is root:
                root = new
            else:
                node.replace(new)
    return root


def _number_array(e: exp.Expr) -> bool:
    """A list literal of number literals (``ARRAY[3, 0.5]``)."""
    return isinstance(e, exp.Array) and bool(e.expressions) and all(
        isinstance(i, exp.Literal) and not i.is_string
        or isinstance(i, exp.Neg) and isinstance(i.this, exp.Literal) for i in e.expressions)


def _call(name: str, *args: exp.Expr) -> exp.Expr:
    """An engine function the rewrites call by name (sqlglot passes it through)."""
    return exp.Anonymous(this=name, expressions=list(args))


def _sqlite_node(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Null) \
            and node.to.is_type(exp.DataType.Type.ARRAY):
        # a list that is always an error: SQLite has no ARRAY type to cast its NULL to
        # (`REGEXEXTRACTALL(NA(), s, a)` wrote `CAST(NULL AS ARRAY<TEXT>)`, a syntax error)
        return exp.Null()
    if isinstance(node, exp.Mod):  # `%` truncates both operands to integers in SQLite
        return _call("MOD", node.this, node.expression)
    if isinstance(node, exp.Extract):
        part = node.this.name.upper()
        if part in _STRFTIME:
            return exp.cast(_call("STRFTIME", exp.Literal.string(_STRFTIME[part]),
                                 node.expression), "INTEGER", copy=False)
        return node  # refused below (sqlglot's EXTRACT is no SQLite function)
    if isinstance(node, exp.Round) and node.args.get("decimals") is not None:
        # SQLite reads negative digits as 0 (ROUND(1234.5, -2) is 1235): a known negative
        # count rounds the scaled value; an unknown one is refused below
        digits = node.args["decimals"]
        places = _integer(digits)
        if places is not None and places < 0:
            scale = exp.Literal.number(f"1e{-places}")
            return exp.Mul(this=exp.Round(this=exp.Div(this=exp.paren(node.this, copy=False),
                                                       expression=scale)),
                           expression=scale.copy())
        return node
    if isinstance(node, exp.Ln):  # SQLite's LN(0) is NULL; the forms read IEEE's -inf
        return exp.Case(ifs=[exp.If(this=exp.EQ(this=node.this.copy(),
                                                expression=exp.Literal.number(0)),
                                    true=exp.Literal.number("-9e999"))],
                        default=exp.Ln(this=node.this))
    if isinstance(node, exp.Substring):
        # SQLite reads SUBSTR's start and length as 32-bit integers (a start of 2 ** 32 - 2
        # reads from the second last character): the forms' bounds stay below 2 ** 31
        def bounded(e: exp.Expr | None) -> exp.Expr | None:
            return None if e is None else _call("MIN", e, exp.Literal.number(_INT32_MAX))
        return _call("SUBSTR", *(a for a in (node.this, bounded(node.args.get("start")),
                                            bounded(node.args.get("length"))) if a is not None))
    if isinstance(node, exp.Left):
        return _call("SUBSTR", node.this, exp.Literal.number(1), node.expression)
    if isinstance(node, exp.Right):
        # SUBSTR from the (n)th last character: from 1 when n passes the length, past the
        # end (empty) when n is 0; a negative n never reaches here (the form's #VALUE!)
        start = exp.Add(this=exp.Sub(this=_call("LENGTH", node.this.copy()),
                                     expression=exp.paren(node.expression, copy=False)),
                        expression=exp.Literal.number(1))
        return _call("SUBSTR", node.this, _call("MAX", start, exp.Literal.number(1)))
    if isinstance(node, exp.StartsWith):  # INSTR is 1 for an empty prefix too
        return exp.EQ(this=_call("INSTR", node.this, node.expression),
                      expression=exp.Literal.number(1))
    if isinstance(node, exp.Contains):
        return exp.GT(this=_call("INSTR", node.this, node.expression),
                      expression=exp.Literal.number(0))
    if isinstance(node, exp.EndsWith):
        text, part = node.this, node.expression
        length = _call("LENGTH", part.copy())
        return exp.or_(exp.EQ(this=length, expression=exp.Literal.number(0)),
                       exp.EQ(this=_call("SUBSTR", text, exp.Neg(this=length.copy())),
                              expression=part), copy=False)
    return node


def _on_decimal_grid(node: exp.Expr) -> bool:
    """Whether an operand of ``node`` is cast to DECIMAL (the forms' exact decimal path)."""
    return any(isinstance(n, exp.Cast) and n.to.is_type(exp.DataType.Type.DECIMAL)
               for n in node.walk())


def _integer(e: exp.Expr) -> int | None:
    """The value of an integer literal (``-2`` included), else None."""
    negative = isinstance(e, exp.Neg)
    inner = e.this if negative else e
    if isinstance(inner, exp.Literal) and not inner.is_string:
        try:
            value = int(inner.this)
        except ValueError:
            return None
        return -value if negative else value
    return None


#: Regular-expression escapes the forms write as `\x{HH}` (RE2, DuckDB); PostgreSQL's ARE reads
#: `\x` greedily over any hex digits, so its fixed-width `\U` form is written instead.
_HEX_ESCAPE = re.compile(r"\\x\{([0-9A-Fa-f]+)\}")
_PATTERNED = (exp.RegexpLike, exp.RegexpILike, exp.RegexpReplace, exp.RegexpSplit)


def _postgres_node(node: exp.Expr) -> exp.Expr:
    def integer(e: exp.Expr | None) -> exp.Expr | None:
        return None if e is None else _int_count(e, "INTEGER")

    if isinstance(node, (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.NullSafeNEQ)) and any(
            _number_array(side) for side in (node.this, node.expression)):
        # a list literal of integers is an integer[] there, which no `=` compares with a
        # numeric[] or double precision[] column (SWITCH(xs, [3], ...) failed the query): both
        # sides as NUMERIC[] (the type checker made both number lists)
        for key in ("this", "expression"):
            node.set(key, exp.cast(node.args[key], "NUMERIC[]", copy=False))
        return node
    if isinstance(node, exp.ArraySize):
        # sqlglot writes ARRAY_LENGTH(x, 1), which is NULL for an empty array where DuckDB's
        # is 0 (`xs[1]` of [] answered blank, not #REF!); CARDINALITY is 0 there but counts a
        # nested list's every item, so it only fills in the empty case
        return exp.Coalesce(this=node.copy(), expressions=[_call("CARDINALITY", node.this.copy())])
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Pow)) \
            and pg_float.guardable(node):
        # float8 `+`, `-`, `*`, `/` and POWER raise where IEEE answers inf or 0 (`pg_float`)
        return pg_float.guard(node)
    if isinstance(node, exp.Round) and node.args.get("decimals") is not None \
            and not pg_float.exact(node.this):
        # ROUND to digits is NUMERIC's only (no ROUND(double precision, integer)): a decimal
        # form over a float8 column (a user's table in decimal mode) reads it as NUMERIC
        node.set("this", exp.cast(node.this, "NUMERIC", copy=False))
        return node
    if isinstance(node, exp.Exp):
        # PostgreSQL's EXP raises where the result leaves the double range (overflow to inf,
        # underflow to 0) instead of answering them; the forms read inf and 0 (their #NUM!
        # tests follow); past these bounds (ln of the largest double, of half the smallest
        # subnormal) the answer is known
        x = node.this
        return exp.Case(ifs=[
            exp.If(this=exp.GT(this=x.copy(), expression=exp.Literal.number("709.782712893384")),
                   true=exp.cast(exp.Literal.string("Infinity"), "DOUBLE PRECISION")),
            exp.If(this=exp.LT(this=x.copy(), expression=exp.Literal.number("-745.1332191019411")),
                   true=exp.Literal.number(0))],
            default=exp.Exp(this=x))
    if isinstance(node, exp.Ln):
        # PostgreSQL's LN raises at 0 and below; the forms read IEEE's -inf and NaN (as
        # DuckDB answers) and test them afterwards
        x = node.this
        double = "DOUBLE PRECISION"
        return exp.Case(ifs=[
            exp.If(this=exp.EQ(this=x.copy(), expression=exp.Literal.number(0)),
                   true=exp.cast(exp.Literal.string("-Infinity"), double)),
            exp.If(this=exp.LT(this=x.copy(), expression=exp.Literal.number(0)),
                   true=exp.cast(exp.Literal.string("NaN"), double))],
            default=exp.Ln(this=x))
    if isinstance(node, exp.Mod):
        # no `%` for DOUBLE PRECISION there; NUMERIC's is exact (a double reads as its 15
        # significant digits, Excel's own precision)
        return _call("MOD", exp.cast(node.this, "NUMERIC", copy=False),
                    exp.cast(node.expression, "NUMERIC", copy=False))
    if isinstance(node, exp.Substring):
        for key in ("start", "length"):
            if node.args.get(key) is not None:
                node.set(key, integer(node.args[key]))
        return node
    if isinstance(node, (exp.Left, exp.Right, exp.Repeat)):
        node.set("expression", integer(node.expression))
        return node
    if isinstance(node, exp.Pad):
        node.set("expression", integer(node.expression))
        return node
    if isinstance(node, exp.EndsWith):
        return exp.EQ(this=exp.Right(this=node.this,
                                     expression=integer(exp.Length(this=node.expression.copy()))),
                      expression=node.expression)
    if isinstance(node, exp.Contains):
        return exp.GT(this=_call("STRPOS", node.this, node.expression),
                      expression=exp.Literal.number(0))
    if isinstance(node, _PATTERNED):
        node.set("expression", _postgres_pattern(node.args.get("expression")))
    elif isinstance(node, exp.Anonymous) and node.name.upper() == "REGEXP_REPLACE":
        node.set("expressions", [node.expressions[0], _postgres_pattern(node.expressions[1]),
                                 *node.expressions[2:]])
    return node


def _postgres_pattern(pattern: exp.Expr | None) -> exp.Expr | None:
    """A regular expression literal with its `\\x{HH}` escapes written `\\UHHHHHHHH`."""
    if isinstance(pattern, exp.Literal) and pattern.is_string:
        return exp.Literal.string(
            _HEX_ESCAPE.sub(lambda m: "\\U%08X" % int(m.group(1), 16), pattern.this))
    return pattern


#: What a form knows of a node that its tree does not say, for the rewrites of a dialect that
#: reads the node differently (kept in sqlglot's ``meta``: it renders as nothing, so every
#: other dialect's SQL is unchanged, and it survives the binder's and `adapt`'s copies).
#: ``DOUBLE``: a FLOOR or CEIL whose operand is a DOUBLE, a LIST_SUM, LIST_AVG or LIST_MEDIAN
#: whose items are. ``NUMBER_TEXT``: a number cast to text that the form parses as a shortest
#: repr (digits, ".", a lowercase "e" exponent).
#: ``DURATION``: a UNIX_MICROS of a Duration (an INTERVAL), not of an instant.
DOUBLE = spark_lists.DOUBLE
NUMBER_TEXT = "formulane.number_text"
DURATION = "formulane.duration"
def _shortest(node: exp.Expr) -> exp.Expr:
    """A value of unknown engine type read as a DECIMAL (`sql_arith.decimal_cast`) as the
    dialects other than DuckDB write it. The forms write a WHEN on DuckDB's TYPEOF (which
    DuckDB folds when planning: a DECIMAL is cast as it is, a DOUBLE read through its text);
    the others' TYPEOF differs or is missing, so there the value is read through its text
    whatever its type, as if TYPEOF said DOUBLE: the branches before that WHEN stay, its THEN
    becomes the ELSE (a CASE in another's ELSE is merged into it, `kit.cases`)."""
    if not isinstance(node, exp.Case):
        return node
    ifs = node.args.get("ifs") or []
    for i, branch in enumerate(ifs):
        test = branch.this
        if isinstance(test, exp.In) and isinstance(test.this, exp.Anonymous) \
                and test.this.name.upper() == "TYPEOF":
            text: exp.Expr = branch.args["true"]
            if i == 0:
                return text
            return exp.Case(ifs=ifs[:i], default=text)
    return node


def marked(node: exp.Expr, key: str) -> exp.Expr:
    """``node`` marked ``key`` (`DOUBLE`, `NUMBER_TEXT`) for the dialect rewrites."""
    node.meta[key] = True
    return node


#: Below 2 ** 52 a DOUBLE may have a fraction; from there on it is an integer (or inf, NaN).
_DOUBLE_INTEGERS = 4503599627370496


def _spark_node(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Anonymous) and node.name.upper() in spark_lists.NAMES:
        # DuckDB's list functions (LIST_SUM, LIST_FILTER, LEN, RANGE...) as Spark's own, or
        # left as they are for `lacking` to refuse (`spark_lists`)
        return spark_lists.rewrite(node)
    if isinstance(node, exp.DateAdd) and not (
            isinstance(node.expression, exp.Cast) and node.expression.to.is_type(
                exp.DataType.Type.INT)):
        # Spark's DATE_ADD takes an INT count of days and refuses a BIGINT (the forms bound
        # their day counts far below 2 ** 31: dates stay within years 1-9999)
        node.set("expression", exp.cast(node.expression, "INT", copy=False))
        return node
    if isinstance(node, (exp.Floor, exp.Ceil)) and node.meta.get(DOUBLE) \
            and node.args.get("decimals") is None:
        # Spark's FLOOR and CEIL of a DOUBLE answer a BIGINT, which fails the query (ANSI
        # mode) past 2 ** 63; from 2 ** 52 on (and for inf and NaN, which ABS(...) < n is
        # not, NaN being Spark's largest double) the double is its own floor and ceiling
        # (a copy inside: `adapt` replaces the node where its parent holds it)
        x = node.this
        return exp.Case(ifs=[exp.If(this=exp.LT(this=exp.Abs(this=x.copy()),
                                                expression=exp.Literal.number(_DOUBLE_INTEGERS)),
                                    true=node.copy())], default=x.copy())
    if isinstance(node, exp.Anonymous) and node.name.upper() == "TRUNC" \
            and len(node.expressions) == 1:
        # DuckDB's TRUNC(x) toward zero; Spark's TRUNC truncates dates. x less its remainder
        # (exact for a DECIMAL; for a DOUBLE fmod's, exact too), inf and NaN themselves
        x = node.expressions[0]
        rest = exp.Mod(this=exp.paren(x.copy(), copy=False), expression=exp.Literal.number(1))
        return exp.Case(ifs=[exp.If(this=_call("ISNAN", rest), true=x.copy())],
                        default=exp.Sub(this=exp.paren(x.copy(), copy=False),
                                        expression=exp.paren(rest.copy(), copy=False)))
    if isinstance(node, exp.Bracket) and node.args.get("offset") == 1 \
            and len(node.expressions) == 1:
        # the forms index lists from 1 (DuckDB's and PostgreSQL's arrays); sqlglot moves the
        # index to Spark's 0-based `[]` only where it can type it, and `[]` out of range fails
        # the query (ANSI mode) where the forms read NULL: Spark's GET is 0-based and NULL
        # outside (a NULL or BIGINT index too)
        index = node.expressions[0]
        k = _integer(index)
        return _call("GET", node.this, exp.Literal.number(k - 1) if k is not None else
                     exp.Sub(this=exp.paren(index, copy=False), expression=exp.Literal.number(1)))
    if isinstance(node, exp.UnixMicros) and node.meta.get(DURATION):
        # DuckDB's EPOCH_US reads an INTERVAL's microseconds; Spark's UNIX_MICROS takes a
        # TIMESTAMP only: the interval added to the epoch instant, read back
        epoch = exp.cast(exp.Literal.string("1970-01-01 00:00:00Z"), "TIMESTAMP")
        return exp.UnixMicros(this=exp.Add(this=epoch, expression=node.this.copy()))
    if isinstance(node, exp.Cast) and node.meta.get(NUMBER_TEXT):
        # Java writes a DOUBLE's exponent with "E" (1.0E15); the form splits at "e"
        return exp.Lower(this=node.copy())
    if isinstance(node, exp.Ln):
        # Spark's LN is NULL at 0 and below; the forms read IEEE's -inf and NaN (as DuckDB
        # answers) and test them afterwards (PMT's growth factor at a rate of -1)
        x = node.this
        return exp.Case(ifs=[
            exp.If(this=exp.EQ(this=x.copy(), expression=exp.Literal.number(0)),
                   true=exp.cast(exp.Literal.string("-Infinity"), "DOUBLE")),
            exp.If(this=exp.LT(this=x.copy(), expression=exp.Literal.number(0)),
                   true=exp.cast(exp.Literal.string("NaN"), "DOUBLE"))],
            default=exp.Ln(this=x))
    if isinstance(node, exp.Substring):
        for key in ("start", "length"):
            if node.args.get(key) is not None:
                node.set(key, _int_count(node.args[key], "INT"))
        return node
    if isinstance(node, (exp.Left, exp.Right, exp.Repeat, exp.Pad)):
        key = "times" if isinstance(node, exp.Repeat) else "expression"
        if node.args.get(key) is not None:
            node.set(key, _int_count(node.args[key], "INT"))
        return node
    if isinstance(node, _PATTERNED + (exp.RegexpExtract, exp.RegexpExtractAll)):
        node.set("expression", _java_pattern(node.args.get("expression")))
    if isinstance(node, exp.RegexpReplace):
        node.set("replacement", _java_replacement(node.args.get("replacement")))
        return node
    if isinstance(node, exp.Anonymous) and node.name.upper() == "REGEXP_REPLACE" \
            and len(node.expressions) == 3:
        # the forms' first-match replacement (DuckDB's REGEXP_REPLACE without 'g'); Spark's
        # replaces every match: the first one is the one after the shortest prefix, kept
        text, replacement = node.expressions[0], node.expressions[2]
        pattern = _java_pattern(node.expressions[1])
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            return node  # (the forms' patterns are literals)
        java = _java_replacement(replacement)
        if not (isinstance(java, exp.Literal) and java.is_string):
            return node
        # (group 1 by number: Spark substitutes `${name}` in the SQL text as a variable; a
        # digit after it is escaped, or Java would read a larger group number)
        rest = java.this
        if rest[:1].isdigit():
            rest = "\\" + rest
        return exp.RegexpReplace(
            this=text, expression=exp.Literal.string(f"^([\\s\\S]*?)(?:{pattern.this})"),
            replacement=exp.Literal.string("$1" + rest))
    return node


def _int_count(e: exp.Expr, to: str) -> exp.Expr:
    """A count or position as the INTEGER some engines' string functions take (no BIGINT
    overloads: PostgreSQL's SUBSTRING, LEFT, RIGHT, LPAD, REPEAT; Spark's, whose implicit
    cast of a larger BIGINT fails the query). The forms bound them below 2 ** 31 already,
    but a start plus a count, each bounded, can pass it: the text has no such character."""
    if isinstance(e, exp.Literal) and not e.is_string:
        return e
    return exp.cast(exp.Least(this=e, expressions=[exp.Literal.number(_INT32_MAX)]), to,
                    copy=False)


#: A replacement in the RE2 syntax the forms write (DuckDB's): ``\\`` a backslash, ``\1`` a
#: group, anything else itself.
_RE2_REWRITE = re.compile(r"\\(\\|\d)")


def _java_pattern(pattern: exp.Expr | None) -> exp.Expr | None:
    """A regular expression literal whose ignoring of case (``(?i)``, which the forms write
    first) folds Unicode as RE2 does (``ſ`` matches ``s``): Java folds ASCII only unless
    told ``u``."""
    if isinstance(pattern, exp.Literal) and pattern.is_string \
            and pattern.this.startswith("(?i)"):
        return exp.Literal.string("(?iu)" + pattern.this[4:])
    return pattern


def _java_replacement(replacement: exp.Expr | None) -> exp.Expr | None:
    """A literal replacement rewritten from RE2's syntax into Java's (Spark's REGEXP_REPLACE),
    where ``$`` refers to a group and a backslash escapes: ``\\1`` becomes ``$1``, a
    literal backslash or ``$`` is escaped."""
    if not (isinstance(replacement, exp.Literal) and replacement.is_string):
        return replacement
    out = []
    for i, piece in enumerate(_RE2_REWRITE.split(replacement.this)):
        if i % 2:  # an escape: a backslash or a group
            out.append("\\\\" if piece == "\\" else "$" + piece)
        else:
            out.append(piece.replace("\\", "\\\\").replace("$", "\\$"))
    return exp.Literal.string("".join(out))


_REWRITES = {"sqlite": lambda n: _sqlite_node(_shortest(n)),
             "postgres": lambda n: _postgres_node(_shortest(n)),
             "spark": lambda n: _spark_node(_shortest(n)),
             "trino": _shortest, "bigquery": _shortest, "snowflake": _shortest}


def _number_text(e: exp.Expr) -> bool:
    """Whether ``e`` is a value cast to text by the form itself (a number's digits)."""
    return isinstance(e, exp.Cast) and not isinstance(e, exp.TryCast) and e.to.is_type(
        exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)


def refuse_unportable(trees: Iterable[exp.Expr | None], dialect: str, span: Span | None = None
                      ) -> None:
    """Raise `Unsupported` when the finished SQL needs something ``dialect`` lacks."""
    what = lacking(trees, dialect)
    if what is not None:
        name = _NAMES.get(dialect, dialect)
        raise _refusal(dialect, f"{name} has no {what}", what, span)


def default_numbers(dialect: str) -> str:
    """The numeric mode a dialect's Number columns have when the caller does not say: "float"
    on SQLite (REAL; it has no DECIMAL type), "decimal" elsewhere."""
    return "float" if dialect == "sqlite" else "decimal"


def refuse_numbers(dialect: str, numbers: str, span: Span | None = None) -> None:
    """SQLite has no DECIMAL type: its numbers are REAL (or INTEGER), so the decimal forms,
    which count on exact DECIMAL arithmetic (ROUNDDOWN's `x - MOD(x, 0.01)`, the decimal grid
    of MOD and FLOOR), would answer in binary floating point. Refused, with the way out."""
    if dialect == "sqlite" and numbers == "decimal":
        raise _refusal(dialect, "SQLite has no DECIMAL type (it stores numbers as REAL)",
                       "numbers", span,
                       "compile for SQLite with numbers='float' (SQLite's REAL is a double), "
                       "or run it on DuckDB, PostgreSQL or polars for exact decimals")


def unwritable(exc: Exception, dialect: str, span: Span | None = None) -> Unsupported:
    """The refusal for what sqlglot reports it cannot write for ``dialect`` (its
    ``UnsupportedError``, raised while rendering)."""
    name = _NAMES.get(dialect, dialect)
    reason = f"sqlglot cannot write it for {name}: {str(exc).splitlines()[0]}"
    return _refusal(dialect, reason, "sql", span)


def _refusal(dialect: str, reason: str, function: str, span: Span | None,
             hint: str | None = None) -> Unsupported:
    name = _NAMES.get(dialect, dialect)
    return Unsupported(f"SQL for {name} cannot express this formula: {reason}",
                       function=function, backend="sql", span=span, reason=reason,
                       hint=hint or "run it on DuckDB, on polars (formulane.apply) or on the "
                                    "scalar engine, which take it")
