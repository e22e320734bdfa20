"""Text forms of the regular-expression functions: REGEXTEST REGEXEXTRACT REGEXEXTRACTALL
REGEXGROUPS REGEXREPLACE.

Contract: only literal patterns of the subset Rust ``regex`` and RE2 read alike are translated
(`_Regex` re-renders them with ``\\x{..}`` escapes); a pattern RE2 rejects is ``#VALUE!`` on
every row, anything else outside the subset is refused.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ...sql.kit import dtype
from ....values import XLError
from ...call import FormCall
from ._base import L, _Folded, _NOT, _case, _f, _fold, _grows, _int, _p, pl
from .case import _class, _esc
from .search import _check_regex_work, _literal_flag


# ==================================================================== regular expressions


class _Unsafe(Exception):
    """The pattern leaves the subset both engines read alike."""


_PERL = {"d": [(0x30, 0x39)],
         "w": [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
         "s": [(0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)]}  # RE2's ASCII \d \w \s
_CONTROL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


class _Regex:
    """A literal RE2 pattern re-rendered for Rust ``regex`` and RE2 alike, with its number of
    capture groups and the least length of a match (0: it can match an empty text)."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.i = 0
        self.groups = 0
        self.ascii = source.isascii()
        rendered, self.minlen = self._alt()
        if self.i != len(source):
            raise _Unsafe("unbalanced parenthesis")
        self.rendered = rendered

    def _peek(self) -> str:
        return self.src[self.i] if self.i < len(self.src) else ""

    def _next(self) -> str:
        ch = self._peek()
        if not ch:
            raise _Unsafe("the pattern ends too early")
        self.i += 1
        return ch

    def _alt(self) -> tuple[str, int]:
        branches = [self._concat()]
        while self._peek() == "|":
            self.i += 1
            branches.append(self._concat())
        return "|".join(b for b, _ in branches), min(n for _, n in branches)

    def _concat(self) -> tuple[str, int]:
        out, least = [], 0
        while self._peek() not in ("", "|", ")"):
            piece, n = self._repeat()
            out.append(piece)
            least += n
        return "".join(out), least

    def _repeat(self) -> tuple[str, int]:
        atom, n, quantifiable = self._atom()
        ch = self._peek()
        if ch not in ("*", "+", "?", "{"):
            return atom, n
        if not quantifiable:
            raise _Unsafe("a repeated anchor")
        self.i += 1
        if ch == "*":
            q, low = "*", 0
        elif ch == "+":
            q, low = "+", 1
        elif ch == "?":
            q, low = "?", 0
        else:
            end = self.src.find("}", self.i)
            body = self.src[self.i:end] if end >= 0 else ""
            lo, sep, hi = body.partition(",")
            if not lo.isdigit() or (hi and not hi.isdigit()) or not lo.isascii() \
                    or not hi.isascii():
                raise _Unsafe("a brace that is not a counted repetition")
            low = int(lo)
            if low > 1000 or (hi and (int(hi) > 1000 or int(hi) < low)):
                raise _Unsafe("a repetition count over 1000")
            q = "{" + body + "}"
            self.i = end + 1
        if self._peek() == "?":
            self.i += 1
            q += "?"
        if self._peek() in ("*", "+", "?", "{"):
            raise _Unsafe("a repeated repetition")
        return f"(?:{atom}){q}", n * low

    def _atom(self) -> tuple[str, int, bool]:
        ch = self._next()
        if ch == "(":
            if self._peek() == "?":
                if self.src[self.i:self.i + 2] != "?:":
                    raise _Unsafe("group flags and named groups")
                self.i += 2
                inner, n = self._alt()
                opening = "(?:"
            else:
                self.groups += 1
                inner, n = self._alt()
                opening = "("
            if self._next() != ")":
                raise _Unsafe("unbalanced parenthesis")
            return f"{opening}{inner})", n, True
        if ch == "[":
            return self._class(), 1, True
        if ch == ".":
            return ".", 1, True
        if ch in ("^", "$"):
            return ch, 0, False
        if ch == "\\":
            return self._escape()
        if ch in ("*", "+", "?", "{", "}", ")", "]"):
            raise _Unsafe(f"a bare {ch!r}")
        return _esc(ch), 1, True

    def _escape(self) -> tuple[str, int, bool]:
        ch = self._next()
        if ch in _PERL:
            return _class(_PERL[ch]), 1, True
        if ch.lower() in _PERL:
            return _class(_PERL[ch.lower()], negate=True), 1, True
        if ch in ("A", "z"):
            return "\\" + ch, 0, False
        char = self._escaped_char(ch)
        return _esc(char), 1, True

    def _escaped_char(self, ch: str) -> str:
        if ch in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[ch]
        if ch == "x":
            if self._peek() == "{":
                end = self.src.find("}", self.i)
                digits = self.src[self.i + 1:end] if end > 0 else ""
                self.i = end + 1
            else:
                digits = self.src[self.i:self.i + 2]
                self.i += 2
            try:
                value = int(digits, 16)
                if not digits.isascii() or 0xD800 <= value <= 0xDFFF:
                    raise ValueError
                return chr(value)
            except ValueError:
                raise _Unsafe("a malformed hexadecimal escape") from None
        if ch.isascii() and not ch.isalnum():
            return ch  # an escaped punctuation character is itself
        raise _Unsafe(f"the escape \\{ch}")

    def _class(self) -> str:
        negate = self._peek() == "^"
        if negate:
            self.i += 1
        items: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self._next()
            if ch == "]" and not first:
                break
            first = False
            if ch in ("[", "]", "&", "~") or (ch == "-" and self._peek() != "]" and items
                                                and False):
                raise _Unsafe(f"{ch!r} inside a class")
            if ch == "\\":
                esc = self._next()
                if esc in _PERL:
                    items.extend(_PERL[esc])
                    continue
                if esc.lower() in _PERL or esc in ("A", "z", "b", "B"):
                    raise _Unsafe(f"\\{esc} inside a class")
                low = self._escaped_char(esc)
            elif ch == "-":
                raise _Unsafe("a bare '-' inside a class")
            else:
                low = ch
            if self._peek() == "-" and self.src[self.i + 1:self.i + 2] not in ("]", ""):
                self.i += 1
                hi = self._next()
                if hi == "\\":
                    hi = self._escaped_char(self._next())
                elif hi in ("[", "]", "&", "~", "-"):
                    raise _Unsafe(f"{hi!r} ending a range")
                if ord(hi) < ord(low):
                    raise _Unsafe("a reversed range")
                items.append((ord(low), ord(hi)))
            else:
                items.append((ord(low), ord(low)))
        return _class(items, negate)


def _regex_plan(call: FormCall, pattern: int, case_flag: int, *,
                nonempty: bool = False) -> Any:
    """(rendered pattern, _Regex, RE2 pattern, case-sensitive) for a literal pattern; or "bad"
    when the scalar engine answers #VALUE! on every row (a flag that is not 0/1, a pattern
    RE2 rejects)."""
    from ....functions._textsearch import compile_regex, options

    name = call.name
    src = call.const(pattern)
    if not isinstance(src, str):
        call.refuse("the pattern must be a literal (only a checked common subset of "
                "RE2 and the engine's regex syntax is translated)")
    ignore_case = _literal_flag(call, case_flag, "case_sensitivity")
    if ignore_case is None:
        return "bad"
    valid = []
    for latin1 in ([True, False] if src.isascii() else [False]):
        try:
            compile_regex(src.encode("ascii") if latin1 else src,
                          options(not ignore_case, False, latin1), name)
            valid.append(True)
        except XLError:
            valid.append(False)
    if not any(valid):
        return "bad"
    if not all(valid):
        call.refuse("RE2 reads this pattern differently on ASCII and other texts")
    _check_regex_work(call, src, not ignore_case, dot_nl=False)
    try:
        parsed = _Regex(src)
    except _Unsafe as exc:
        call.refuse(f"the pattern uses {exc.args[0]}, outside the subset RE2 and the "
                "engine's regex read alike")
    if ignore_case and not parsed.ascii:
        call.refuse("ignoring case with non-ASCII pattern characters (the engines' "
                "Unicode case-folding tables differ)")
    if nonempty and parsed.minlen == 0:
        call.refuse("the pattern can match an empty text (engines differ on where "
                "the next match may start)")
    rendered = ("(?i)" if ignore_case else "") + parsed.rendered
    if call.backend == "polars":
        try:
            pl.select(pl.lit("").str.contains(rendered))
        except Exception:
            call.refuse("polars' regex engine rejects the translated pattern")
    return rendered, parsed


def polars_regextest(call: FormCall, text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan(call, 1, 2)
    if plan == "bad":
        return pl.lit(None, dtype=pl.Boolean), [(pl.lit(True), "#VALUE!")]
    return text.str.contains(plan[0])


def sql_regextest(call: FormCall, text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan(call, 1, 2)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    return exp.RegexpLike(this=text.copy(), expression=L.string(plan[0]))


def polars_regexextract(call: FormCall, text: Any, pattern: Any, mode: Any, case_flag: Any) -> Any:
    bad_mode = mode != 0
    plan = _regex_plan(call, 1, 3)
    if plan == "bad":
        return pl.lit(None, dtype=pl.Utf8), [(pl.lit(True), "#VALUE!")]
    value = text.str.extract(plan[0], 0)
    return value, [(bad_mode, "#VALUE!"), (value.is_null(), "#N/A")]


def sql_regexextract(call: FormCall, text: Any, pattern: Any, mode: Any, case_flag: Any) -> Any:
    bad_mode = exp.NEQ(this=_p(mode), expression=L.number(0))
    plan = _regex_plan(call, 1, 3)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    found = exp.RegexpLike(this=text.copy(), expression=L.string(plan[0]))
    value = exp.RegexpExtract(this=text.copy(), expression=L.string(plan[0]), group=L.number(0))
    return _case([(found, value)]), [(bad_mode, "#VALUE!"),
                                     (exp.Not(this=exp.Paren(this=found.copy())), "#N/A")]


def polars_regexextractall(call: FormCall, text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan(call, 1, 2, nonempty=True)
    if plan == "bad":
        return pl.lit(None, dtype=pl.List(pl.Utf8)), [(pl.lit(True), "#VALUE!")]
    return text.str.extract_all(plan[0])


def sql_regexextractall(call: FormCall, text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan(call, 1, 2, nonempty=True)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    return _f("REGEXP_EXTRACT_ALL", text.copy(), L.string(plan[0]))


def polars_regexgroups(call: FormCall, text: Any, pattern: Any, case_flag: Any) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return folded
    plan = _regex_plan(call, 1, 2)
    if plan == "bad":
        return pl.lit(None, dtype=pl.List(pl.Utf8)), [(pl.lit(True), "#VALUE!")]
    rendered, parsed = plan
    found = text.str.contains(rendered)
    if parsed.groups == 0:
        value = pl.when(found).then(pl.lit(pl.Series([[]], dtype=pl.List(pl.Utf8))).first())
    else:
        groups = text.str.extract_groups(rendered)
        value = pl.when(found).then(pl.concat_list(
            [groups.struct.field(str(g)).fill_null("") for g in range(1, parsed.groups + 1)]))
    return value, [(~found, "#N/A")]


def sql_regexgroups(call: FormCall, text: Any, pattern: Any, case_flag: Any) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return folded
    plan = _regex_plan(call, 1, 2)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    rendered, parsed = plan
    found = exp.RegexpLike(this=text.copy(), expression=L.string(rendered))
    items = [exp.RegexpExtract(this=text.copy(), expression=L.string(rendered),
                               group=L.number(g)) for g in range(1, parsed.groups + 1)]
    value = exp.cast(exp.Array(expressions=items), dtype("VARCHAR[]"))
    return _case([(found, value)]), [(exp.Not(this=exp.Paren(this=found.copy())), "#N/A")]


def _replace_template(call: FormCall, pattern: str, ignore_case: bool,
                      parsed: _Regex) -> list[str | int] | None:
    """The replacement's pieces (texts and group numbers), None when the scalar engine says
    #VALUE! (a group the pattern lacks)."""
    from ....functions._textsearch import Regex, replacement_template

    rep = call.const(2)
    if not isinstance(rep, str):
        call.refuse("the replacement must be a literal")
    try:
        regex = Regex(pattern, "", "REGEXREPLACE", case_sensitive=not ignore_case)
        return replacement_template(rep, regex, "REGEXREPLACE")
    except XLError:
        return None


def _regexreplace_plan(call: FormCall) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return _Folded(folded)
    plan = _regex_plan(call, 1, 4, nonempty=True)
    if plan == "bad":
        return "bad"
    rendered, parsed = plan
    nth = call.const(3)
    if nth is _NOT or nth is None or _int(nth) not in (0, 1):
        call.refuse("occurrence must be a literal 0 (all) or 1 (the first)")
    ignore_case = rendered.startswith("(?i)")
    template = _replace_template(call, call.const(1), ignore_case, parsed)
    if template is None:
        return "bad"
    if any(isinstance(part, int) for part in template):
        call.refuse("a replacement that inserts groups can grow the text: "
                + _grows())
    literal = "".join(part for part in template if isinstance(part, str))
    if len(literal) > parsed.minlen:
        call.refuse("the replacement can be longer than a match: "
                + _grows())
    return rendered, literal, _int(nth)


def polars_regexreplace(call: FormCall, *args: Any) -> Any:
    plan = _regexreplace_plan(call)
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return pl.lit(None, dtype=pl.Utf8), [(pl.lit(True), "#VALUE!")]
    if not isinstance(plan, tuple) or len(plan) != 3:
        return plan
    rendered, literal, nth = plan
    value = literal.replace("$", "$$")
    if nth == 0:
        return args[0].str.replace_all(rendered, value)
    return args[0].str.replace(rendered, value, n=1)


def sql_regexreplace(call: FormCall, *args: Any) -> Any:
    plan = _regexreplace_plan(call)
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    if not isinstance(plan, tuple) or len(plan) != 3:
        return plan
    rendered, literal, nth = plan
    value = L.string(literal.replace("\\", "\\\\"))
    if nth == 0:
        return exp.RegexpReplace(this=args[0].copy(), expression=L.string(rendered),
                                 replacement=value, modifiers=L.string("g"))
    # the first match only (sqlglot would add DuckDB's 'g' to a RegexpReplace node)
    return exp.Anonymous(this="REGEXP_REPLACE", expressions=[
        args[0].copy(), L.string(rendered), value])


