"""Text forms of the searches and splits: FIND SEARCH, TEXTBEFORE TEXTAFTER TEXTSPLIT, and the
RE2 work budget the regular-expression forms share.

Contract: positions count code points (polars' byte offsets are never used as positions); a
wildcard or delimiter that is not a literal is refused with the reason.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable, Sequence

from sqlglot import exp

from ....values import XLError
from ...call import FormCall
from ._base import (
    L, LIMIT, _Folded, _NOT, _add, _case, _eq, _f, _fold, _ge, _gt, _length, _let, _lt,
    _pl_int, _pl_number, _pl_text, _sql_int, _sub, _substr, pl,
)
from .case import _count, _esc, case_table, pl_case, sql_case


# ----------------------------------------------------------------------- FIND, SEARCH


def _pl_position_after(start: Any, within: Any, find: Any, empty_find: Any,
                       found_at: Callable[[Any], tuple[Any, Any]]) -> Any:
    """Shared by FIND and SEARCH: start_num checks, then ``found_at(tail)`` gives (found,
    characters before the match) in the text from start_num on."""
    s = _pl_int(start.clip(lower_bound=1))
    length = within.str.len_chars().cast(pl.Int64)
    past = s > length + empty_find.cast(pl.Int64)
    tail = within.str.slice(s - 1)
    found, before = found_at(tail)
    value = _pl_number(before.cast(pl.Int64) + s)
    return value, [(start < 1, "#VALUE!"), (past, "#VALUE!"), (~found, "#VALUE!")]


def _pl_literal_find(tail: Any, needle: Any) -> tuple[Any, Any]:
    parts = tail.str.splitn(needle, 2)
    before = parts.struct.field("field_0").str.len_chars()
    found = parts.struct.field("field_1").is_not_null()
    return found, before


def polars_find(call: FormCall, find: Any, within: Any, start: Any) -> Any:
    const = call.const(0)
    if const == "":
        return _pl_position_after(start, within, find, pl.lit(True),
                                  lambda tail: (pl.lit(True), pl.lit(0)))
    if isinstance(const, str):
        return _pl_position_after(start, within, find, pl.lit(False),
                                  lambda tail: _pl_literal_find(tail, const))
    empty = find == ""

    def found_at(tail: Any) -> tuple[Any, Any]:
        found, before = _pl_literal_find(tail, find)
        return empty | found, pl.when(empty).then(0).otherwise(before)

    return _pl_position_after(start, within, find, empty, found_at)


def _sql_position_after(call: FormCall, start: Any, within: Any, empty_find: Any,
                        offset_in: Callable[[Any], Any], hay: Any = None) -> Any:
    """FIND/SEARCH in SQL: ``offset_in(tail)`` is the 0-based offset of the match in the
    text from start_num on (``hay``: the text searched, lowered for SEARCH; same length as
    ``within``), NULL when there is none. A constant start_num of at least 1 is written as
    its number with no test; the offset (read twice) is bound once where the query can."""
    from ...sql.let import let

    k = _count(call, 2, 1)
    s = L.number(k) if k is not None else _f("GREATEST", _sql_int(start), L.number(1))
    past = _gt(s, _add(_length(within), _case([(empty_find, L.number(1))], L.number(0))))
    searched = within if hay is None else hay
    offset = let(_let(_substr(searched, s.copy()), offset_in))
    value = _add(offset, s.copy())
    errors = [] if k is not None else [(_lt(start, L.number(1)), "#VALUE!")]
    return value, [*errors, (past, "#VALUE!"),
                   (exp.Is(this=offset.copy(), expression=exp.Null()), "#VALUE!")]


def _sql_strpos_offset(needle: Any) -> Callable[[Any], Any]:
    def offset_in(tail: Any) -> Any:  # STRPOS(x, '') is 1
        return _sub(exp.Nullif(this=_f("STRPOS", tail, needle.copy()), expression=L.number(0)),
                    L.number(1))
    return offset_in


def sql_find(call: FormCall, find: Any, within: Any, start: Any) -> Any:
    return _sql_position_after(call, start, within, _eq(find, L.string("")),
                               _sql_strpos_offset(find))


def _search_plan(call: FormCall) -> tuple[bool, list[str], str]:
    """SEARCH's constant pattern: (empty find_text, literal segments or [], regex or "")."""
    from ....functions._textsearch import lower1, wildcard_segments

    const = call.const(0)
    if not isinstance(const, str):
        call.refuse("find_text must be a literal (its wildcards decide the search)")
    leading, segments = wildcard_segments(lower1(const))
    if not segments:
        return const == "", [], ""
    if leading or len(segments) > 1 or any(ch is None for ch in segments[0]):
        _check_regex_work(call, _search_re2(leading, segments))
        body = "(?s:.*?)".join("".join("." if ch is None else _esc(ch) for ch in seg)
                               for seg in segments)
        return False, [], ("(?s:.*?)" if leading else "") + "(?s:" + body + ")"
    return False, ["".join(ch for ch in segments[0] if ch is not None)], ""


def _search_re2(leading: bool, segments: list[list[str | None]]) -> str:
    import re2  # type: ignore[import-untyped]

    parts = ["".join("." if ch is None else re2.escape(ch) for ch in seg) for seg in segments]
    return (".*?" if leading else "") + ".*?".join(parts)


def polars_search(call: FormCall, find: Any, within: Any, start: Any) -> Any:
    empty, literal, regex = _search_plan(call)
    if not literal and not regex:
        return _pl_position_after(start, within, find, pl.lit(empty),
                                  lambda tail: (pl.lit(True), pl.lit(0)))
    lowered = pl_case(within, "lower")
    if literal:
        return _pl_position_after(start, lowered, find, pl.lit(False),
                                  lambda tail: _pl_literal_find(tail, literal[0]))

    def found_at(tail: Any) -> tuple[Any, Any]:
        prefix = tail.str.extract(f"^(?s:(.*?)){regex}", 1)
        return prefix.is_not_null(), prefix.str.len_chars()

    return _pl_position_after(start, lowered, find, pl.lit(False), found_at)


def sql_search(call: FormCall, find: Any, within: Any, start: Any) -> Any:
    empty, literal, regex = _search_plan(call)
    if not literal and not regex:
        return _sql_position_after(call, start, within, exp.Boolean(this=empty),
                                   lambda tail: L.number(0))
    lowered = sql_case(within, "lower")
    if literal:
        return _sql_position_after(call, start, within, exp.Boolean(this=False),
                                   _sql_strpos_offset(L.string(literal[0])), lowered)

    def offset_in(tail: Any) -> Any:
        found = exp.RegexpLike(this=tail, expression=L.string(regex))
        prefix = exp.RegexpExtract(this=tail.copy(), expression=L.string(f"^(?s:(.*?)){regex}"),
                                   group=L.number(1))
        return _case([(found, _length(prefix))])

    return _sql_position_after(call, start, within, exp.Boolean(this=False), offset_in,
                               lowered)


# ------------------------------------------------------------ RE2 work budget (scalar)


def _check_regex_work(call: FormCall, pattern: str, case_sensitive: bool = True,
                      dot_nl: bool = True) -> None:
    """Refuse a pattern whose RE2 program is large enough that the scalar engine could stop
    with `LimitExceeded` on a text within the text limit (see `_textsearch.check_work`)."""
    from ....functions._textsearch import REGEX_WORK_LIMIT, compile_regex, options

    name = call.name
    worst = 0
    modes = [False] if not pattern.isascii() else [True, False]
    for latin1 in modes:
        try:
            regex = compile_regex(pattern.encode("ascii") if latin1 else pattern,
                                  options(case_sensitive, dot_nl, latin1), name)
        except XLError:
            continue
        size = max(regex.programsize, regex.reverseprogramsize)
        nbytes = LIMIT if latin1 else 4 * LIMIT
        worst = max(worst, size * nbytes)
    if worst > REGEX_WORK_LIMIT:
        call.refuse("the pattern is large enough that the scalar engine's regular-"
                "expression budget could stop a long text")


# ------------------------------------------------------------ TEXTBEFORE, TEXTAFTER, SPLIT


def _one_delimiter(call: FormCall, i: int) -> str:
    d = call.const(i)
    if isinstance(d, tuple) and len(d) == 1:
        d = d[0]
    if not isinstance(d, str):
        call.refuse("the delimiter must be one literal text (several delimiters, "
                "the longest winning at each position, have no native split)")
    return d


def _flag(v: Any) -> bool | None:
    """An Excel 0/1 flag literal: its truth, or None when it is neither (#VALUE!)."""
    if v is None or v is _NOT or isinstance(v, (str, tuple)):
        return None
    if v == 0:
        return False
    if v == 1:
        return True
    return None


def _literal_flag(call: FormCall, i: int, what: str) -> bool | None:
    v = call.const(i)
    if v is _NOT:
        call.refuse(f"{what} must be a literal")
    return _flag(v)


def _caseless(text: str) -> bool:
    """No character of ``text`` takes part in a lower-case mapping (so ignoring case finds
    exactly what matching case finds)."""
    src, dst = case_table("lower")
    involved = set(src) | set(dst)
    return not any(ch in involved for ch in text)


def _has_border(d: str) -> bool:
    """Some proper prefix of d is also a suffix: occurrences may overlap, so counting from
    the end can find other occurrences than counting from the start."""
    return any(d[:i] == d[-i:] for i in range(1, len(d)))


class _Span:
    """Where TEXTBEFORE/TEXTAFTER cut: start and end (characters) and whether found."""

    def __init__(self, start: Any, end: Any, found: Any) -> None:
        self.start, self.end, self.found = start, end, found


def _before_after_plan(call: FormCall) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return _Folded(folded)
    d = _one_delimiter(call, 1)
    k = call.const(2)
    if k is _NOT or k is None:
        call.refuse("instance_num must be a literal")
    ignore_case = _literal_flag(call, 3, "match_mode")
    match_end = _literal_flag(call, 4, "match_end")
    k = math.floor(Decimal(k))  # Excel takes INT of instance_num, as the scalar engine does
    if ignore_case is None or match_end is None or k == 0:
        return "bad"  # #VALUE! for every non-empty text
    if ignore_case and not _caseless(d):
        from ....functions._textsearch import lower1
        d = lower1(d)
    else:
        ignore_case = False
    if k < 0 and d and _has_border(d):
        call.refuse("a negative instance_num with a delimiter whose occurrences can "
                "overlap (counting from the end would find others)")
    return d, k, ignore_case, match_end


def _pl_span(text: Any, d: str, k: int, ignore_case: bool, match_end: bool) -> _Span:
    length = text.str.len_chars().cast(pl.Int64)
    if not d:
        at = pl.lit(0, dtype=pl.Int64) if k > 0 else length
        return _Span(at, at, pl.lit(True))
    hay = pl_case(text, "lower") if ignore_case else text
    parts = hay.str.split(d)
    count = parts.list.len().cast(pl.Int64) - 1
    if k > 0:
        j = pl.lit(k, dtype=pl.Int64)
        found = count >= k
        edge = count == k - 1  # match_end: the end of the text counts as one more
        edge_at = length
    else:
        j = count + k + 1
        found = j >= 1
        edge = count == -k - 1
        edge_at = pl.lit(0, dtype=pl.Int64)
    start = parts.list.slice(0, j.clip(lower_bound=0)).list.join(d).str.len_chars() \
        .cast(pl.Int64)
    end = start + len(d)
    if match_end:
        start = pl.when(found).then(start).when(edge).then(edge_at)
        end = pl.when(found).then(end).when(edge).then(edge_at)
        found = found | edge
    return _Span(start, end, found)


def _pl_before_after(call: FormCall, args: Sequence[Any]) -> Any:
    name = call.name
    plan = _before_after_plan(call)
    if isinstance(plan, _Folded):
        return plan.result
    text = args[0]
    fallback = args[5] if len(args) > 5 else pl.lit(None, dtype=pl.Utf8)
    empty = text == ""
    if plan == "bad":
        return pl.when(empty).then(_pl_text("")), [(~empty, "#VALUE!")]
    d, k, ignore_case, match_end = plan
    span = _pl_span(text, d, k, ignore_case, match_end)
    cut = text.str.slice(0, span.start) if name == "TEXTBEFORE" else text.str.slice(span.end)
    too_far = text.str.len_chars() < abs(k)
    value = pl.when(empty).then(_pl_text("")).when(span.found).then(cut).otherwise(fallback)
    missing = ~empty & ~span.found & fallback.is_null()
    return value, [(~empty & too_far, "#VALUE!"), (missing, "#N/A")]


def polars_textbefore(call: FormCall, *args: Any) -> Any:
    return _pl_before_after(call, args)


def polars_textafter(call: FormCall, *args: Any) -> Any:
    return _pl_before_after(call, args)


def _sql_span(text: Any, d: str, k: int, ignore_case: bool, match_end: bool) -> _Span:
    length = _length(text)
    if not d:
        at = L.number(0) if k > 0 else length
        return _Span(at, at.copy(), exp.Boolean(this=True))
    hay = sql_case(text, "lower") if ignore_case else text.copy()
    parts = _f("STRING_SPLIT", hay, L.string(d))
    count = _sub(exp.ArraySize(this=parts.copy()), L.number(1))
    if k > 0:
        j: Any = L.number(k)
        found = _ge(count, L.number(k))
        edge = _eq(count.copy(), L.number(k - 1))
        edge_at = length.copy()
    else:
        j = _add(count.copy(), L.number(k + 1))
        found = _ge(j.copy(), L.number(1))
        edge = _eq(count.copy(), L.number(-k - 1))
        edge_at = L.number(0)
    head = _f("LIST_SLICE", parts.copy(), L.number(1), _f("GREATEST", j, L.number(0)))
    start = _length(_f("ARRAY_TO_STRING", head, L.string(d)))
    end = _add(start.copy(), L.number(len(d)))
    if match_end:
        start = _case([(found.copy(), start), (edge.copy(), edge_at.copy())])
        end = _case([(found.copy(), end), (edge.copy(), edge_at.copy())])
        found = exp.or_(found, edge)
    return _Span(start, end, found)


def _sql_before_after(call: FormCall, args: Sequence[Any]) -> Any:
    name = call.name
    plan = _before_after_plan(call)
    if isinstance(plan, _Folded):
        return plan.result
    text = args[0]
    fallback = args[5] if len(args) > 5 else exp.Null()
    empty = _eq(text, L.string(""))
    if plan == "bad":
        return _case([(empty, L.string(""))]), [
            (exp.Not(this=exp.Paren(this=empty.copy())), "#VALUE!")]
    d, k, ignore_case, match_end = plan
    span = _sql_span(text, d, k, ignore_case, match_end)
    if name == "TEXTBEFORE":
        cut = _substr(text, L.number(1), span.start)
    else:
        cut = _substr(text, _add(span.end, L.number(1)))
    too_far = _lt(_length(text), L.number(abs(k)))
    value = _case([(empty.copy(), L.string("")), (span.found.copy(), cut)], fallback.copy())
    not_empty = exp.Not(this=exp.Paren(this=empty.copy()))
    missing = exp.and_(not_empty.copy(), exp.Not(this=exp.Paren(this=span.found.copy())),
                       exp.Is(this=fallback.copy(), expression=exp.Null()))
    return value, [(exp.and_(not_empty, too_far), "#VALUE!"), (missing, "#N/A")]


def sql_textbefore(call: FormCall, *args: Any) -> Any:
    return _sql_before_after(call, args)


def sql_textafter(call: FormCall, *args: Any) -> Any:
    return _sql_before_after(call, args)


def _split_plan(call: FormCall) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return _Folded(folded)
    r = call.const(2)
    if r is _NOT:
        call.refuse("row_delimiter must be a literal (or left out)")
    if r:
        return "bad"
    d = call.const(1)
    if isinstance(d, tuple) and len(d) == 1:
        d = d[0]
    if d == "" or d == ():
        return "bad"
    d = _one_delimiter(call, 1)
    ignore_case = _literal_flag(call, 4, "match_mode")
    if ignore_case is None:
        return "bad"
    if ignore_case and not _caseless(d):
        call.refuse("match_mode 1 with a delimiter that has cased letters (the "
                "pieces would have to be cut from the text by positions found in its lower case)")
    return d


def polars_textsplit(call: FormCall, text: Any, delim: Any, row: Any, ignore_empty: Any, mode: Any) -> Any:
    plan = _split_plan(call)
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return pl.lit(None, dtype=pl.List(pl.Utf8)), [(pl.lit(True), "#VALUE!")]
    if not isinstance(plan, str):
        return plan
    parts = text.str.split(plan)
    kept = parts.list.eval(pl.element().filter(pl.element() != ""))
    return pl.when(ignore_empty).then(kept).otherwise(parts)


def sql_textsplit(call: FormCall, text: Any, delim: Any, row: Any, ignore_empty: Any, mode: Any) -> Any:
    plan = _split_plan(call)
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    if not isinstance(plan, str):
        return plan
    parts = _f("STRING_SPLIT", text.copy(), L.string(plan))
    x = exp.column("_x")
    kept = _f("LIST_FILTER", parts.copy(), exp.Lambda(
        this=exp.NEQ(this=x, expression=L.string("")), expressions=[exp.to_identifier("_x")]))
    return _case([(ignore_empty.copy(), kept)], parts)


