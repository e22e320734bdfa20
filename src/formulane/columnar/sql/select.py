"""SQL for whole tables: `sql_select` and the compiled forms behind it (`SqlForm`).

`to_sql_forms` compiles programs with one binder (a sub-expression read twice becomes a
lateral binding where the dialect has them), writes each dialect's own spelling
(`dialects.adapt`), refuses what the dialect lacks (`dialects.refuse_unportable`) and renders
each expression once; `build_select` assembles the query from those texts into a skeleton kept
by its shape. The table is an identifier, never SQL (`table_expression`). Importing this
imports sqlglot, not polars.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, cast

from sqlglot import exp

from ...errors import CheckError
from ..names import ERROR_SUFFIX, check_output_names


@dataclass(frozen=True)
class SqlForm:
    """A program as SQL: the value and error-code expressions, and the bindings they read
    (``(name, expression, level)``, see `sql_let`; empty when nothing is read twice or the
    dialect has no lateral subqueries). With bindings, the expressions are valid only in a
    query whose FROM clause is `from_clause` (`select` builds one).

    ``texts``: the value's, the error's and each binding's SQL, rendered once when the form is
    built (`to_sql_forms`); `select`, `value_sql` and the length limit read them, so a
    program's SQL is rendered once however it is used (rendering is most of the compile time
    of a large formula)."""

    value: exp.Expr
    error: exp.Expr | None
    dialect: str
    bindings: tuple[tuple[str, exp.Expr, int], ...] = ()
    prefix: str = "_f"
    texts: RenderedSql | None = field(default=None, compare=False, repr=False)

    @property
    def value_sql(self) -> str:
        return self.texts.value if self.texts is not None else self.value.sql(self.dialect)

    @property
    def error_sql(self) -> str | None:
        if self.texts is not None:
            return self.texts.error
        return None if self.error is None else self.error.sql(self.dialect)

    def binding_sql(self) -> tuple[str, ...]:
        """Each binding's SQL, in the order of `bindings`."""
        if self.texts is not None:
            return self.texts.bindings
        return tuple(e.sql(self.dialect) for _, e, _ in self.bindings)

    def length(self) -> int:
        """Characters of the value's, the error's and the bindings' SQL (the E411 measure)."""
        return sum(map(len, self.binding_sql())) + len(self.value_sql) + \
            len(self.error_sql or "")

    def from_clause(self, source: exp.Expr) -> tuple[exp.Expr, list[exp.Join]]:
        """(the source, aliased ``_t`` when there are bindings; the lateral joins)."""
        from . import let as sql_let

        if not self.bindings:
            return source, []
        return (exp.alias_(source, sql_let.TABLE_ALIAS, table=True, quoted=False),
                sql_let.lateral_joins(list(self.bindings), self.prefix))

    def select(self, table: Any, value_name: str = "value", error_name: str = "error",
               keep_columns: bool = False) -> str:
        """``SELECT [<table>.*,] value AS value_name[, error AS error_name] FROM table`` (the
        table as `table_expression` takes it)."""
        return build_select(table_expression(table), [(value_name, error_name, self)],
                            keep_columns, self.dialect)


@dataclass(frozen=True)
class RenderedSql:
    """The SQL text of a form's value, error (None: cannot err) and bindings (shared by the
    forms compiled with one binder)."""

    value: str
    error: str | None
    bindings: tuple[str, ...]


def _render(e: exp.Expr, dialect: str) -> str:
    """``e`` as SQL, without sqlglot's defensive deep copy (see `_Renderer`)."""
    return _Renderer(dialect)(e)


class _Renderer:
    """Renders trees as SQL of one dialect, as ``e.sql(dialect, copy=False)`` does, through one
    sqlglot ``Generator`` for all the trees of a compile (sqlglot builds one per call: with the
    dialect's lookup, about 25 µs of each render, a quarter of compiling a short formula).
    The generator's one piece of state across trees, its sequence of made-up alias names,
    restarts for each tree as in a new generator; its error list is reset by each
    ``generate``. Not shared between threads (one per compile).

    Without sqlglot's defensive deep copy: the trees a form holds are built for it and rendered
    once (`to_sql_forms`), and dialect rewrites are idempotent on them
    (tests/columnar/test_compile_render.py renders every golden case twice and compares).
    What sqlglot cannot write for the dialect raises (`to_sql_forms` refuses it) instead of a
    logged warning and SQL that drops it (BigQuery's REGEXP_REPLACE has no modifiers)."""

    __slots__ = ("generator",)

    def __init__(self, dialect: str) -> None:
        from sqlglot import ErrorLevel
        from sqlglot.dialects.dialect import Dialect

        self.generator = Dialect.get_or_raise(dialect).generator(
            unsupported_level=ErrorLevel.RAISE)

    def __call__(self, e: exp.Expr) -> str:
        from sqlglot.helper import name_sequence

        self.generator._next_name = name_sequence("_t")  # as in a new generator
        return self.generator.generate(e, copy=False)


#: Marks where `build_select` puts a rendered text into the rendered query skeleton (NUL never
#: appears in SQL the forms write nor in a table name: `table_expression` refuses it).
_SLOT = "\x00{}\x00"


def build_select(source: exp.Expr, outputs: list[tuple[str, str, SqlForm]],
                 keep_columns: bool, dialect: str) -> str:
    """One SELECT over ``source`` computing every output (forms compiled with one binder).
    The query is rendered as a skeleton whose expressions are slots, each then replaced by its
    form's text rendered once (`SqlForm.texts`): the same text as rendering the whole tree.
    The skeleton depends only on the query's shape (`_shape`), and is kept by it: rendering
    it was a fifth of compiling a short formula."""
    shape = _shape(source, outputs, keep_columns, dialect)
    kept = None if shape is None else _SKELETONS.get(shape)
    if kept is not None:
        filled = _slot_texts(outputs)
        head, slots, rests = kept
        return head + "".join(filled[i] + rest for i, rest in zip(slots, rests))

    texts: list[str] = []

    def slot(text: str) -> exp.Expr:
        texts.append(text)
        return exp.Var(this=_SLOT.format(len(texts) - 1))

    query = _select_of(source, outputs, keep_columns, dialect, slot)
    parts = _render(query, dialect).split("\x00")
    order = parts[1::2]  # the slots as rendered (the bindings' come after the columns')
    if len(parts) != 2 * len(texts) + 1 or sorted(order) != sorted(map(str, range(len(texts)))):
        # an output name held a NUL: the whole tree rendered at once
        return _select_of(source, outputs, keep_columns, dialect, None).sql(dialect)
    if shape is not None:
        if len(_SKELETONS) >= _SKELETONS_MAX:
            _SKELETONS.clear()
        _SKELETONS[shape] = (parts[0], tuple(int(i) for i in order), tuple(parts[2::2]))
    return parts[0] + "".join(texts[int(i)] + rest for i, rest in zip(order, parts[2::2]))


#: Rendered query skeletons by shape (`build_select`): (text before the first slot, the slots
#: in rendered order, the text after each). Bounded: cleared when full.
_SKELETONS: dict[tuple[Any, ...], tuple[str, tuple[int, ...], tuple[str, ...]]] = {}
_SKELETONS_MAX = 512


def _shape(source: exp.Expr, outputs: list[tuple[str, str, SqlForm]], keep_columns: bool,
           dialect: str) -> tuple[Any, ...] | None:
    """What the skeleton `build_select` renders depends on, and nothing else: the dialect, the
    table's identifiers, ``keep_columns``, the output names and which outputs have an error
    column, the bindings' names and levels (merged as `_select_of` merges them) and their
    prefix; None (not kept) for a source that is not a plain table of identifiers."""
    if type(source) is not exp.Table:
        return None
    table = []
    for key, part in source.args.items():
        if part is None:
            continue
        if type(part) is not exp.Identifier or any(
                not isinstance(v, (str, bool)) for v in part.args.values() if v is not None):
            return None
        table.append((key, tuple(sorted((k, v) for k, v in part.args.items()
                                        if v is not None))))
    bindings: list[tuple[str, int]] = []
    seen: set[str] = set()
    prefix = "_f"
    for _, _, form in outputs:
        for name, _, level in form.bindings:
            if name not in seen:
                seen.add(name)
                bindings.append((name, level))
        prefix = form.prefix
    return (dialect, tuple(table), keep_columns, prefix, tuple(bindings),
            tuple((value, error, form.error_sql is not None) for value, error, form in outputs))


def _slot_texts(outputs: list[tuple[str, str, SqlForm]]) -> list[str]:
    """The texts of `build_select`'s slots, in the order `_select_of` makes the slots: each
    binding once (merged in order), then each output's value and error."""
    texts: list[str] = []
    seen: set[str] = set()
    for _, _, form in outputs:
        for binding, text in zip(form.bindings, form.binding_sql()):
            if binding[0] not in seen:
                seen.add(binding[0])
                texts.append(text)
    for _, _, form in outputs:
        texts.append(form.value_sql)
        error = form.error_sql
        if error is not None:
            texts.append(error)
    return texts


def _select_of(source: exp.Expr, outputs: list[tuple[str, str, SqlForm]], keep_columns: bool,
               dialect: str, slot: Callable[[str], exp.Expr] | None) -> exp.Select:
    """The query of `build_select`; with ``slot``, each expression is the slot of its text."""
    from . import let as sql_let

    bindings: list[tuple[str, exp.Expr, int]] = []
    seen: set[str] = set()
    prefix = "_f"
    for _, _, form in outputs:
        for binding, text in zip(form.bindings, form.binding_sql()):
            if binding[0] not in seen:
                seen.add(binding[0])
                bindings.append((binding[0], binding[1] if slot is None else slot(text),
                                 binding[2]))
        prefix = form.prefix
    merged = SqlForm(exp.Null(), None, dialect, tuple(bindings), prefix)
    source, joins = merged.from_clause(source)
    columns: list[exp.Expr] = []
    if keep_columns:
        columns.append(exp.Column(this=exp.Star(), table=exp.to_identifier(
            sql_let.TABLE_ALIAS, quoted=False)) if joins else exp.Star())
    for value_name, error_name, form in outputs:
        value = form.value if slot is None else slot(form.value_sql)
        columns.append(exp.alias_(value, value_name, quoted=True, copy=slot is None))
        error = form.error_sql
        if error is not None:
            err = cast("exp.Expr", form.error) if slot is None else slot(error)
            columns.append(exp.alias_(err, error_name, quoted=True, copy=slot is None))
    query = exp.Select(expressions=columns).from_(source, copy=False)
    if joins:
        query.set("joins", joins)
    return query


#: Longest table-name part accepted (PostgreSQL's limit is 63 bytes, others allow more).
MAX_IDENTIFIER = 1_024


def table_expression(table: Any) -> exp.Table:
    """The table `sql_select` reads, as a quoted identifier: never parsed as SQL.

    ``table`` is a name (one identifier, quoted as one: ``"secrets --"`` is the table of that
    name, ``"a.b"`` a table whose name has a dot), a tuple of 2 or 3 names for a schema- or
    catalog-qualified table (``("sales", "orders")``), or a `sqlglot.exp.Table` the caller
    built from identifiers; anything else is a `CheckError` (E209)."""
    if isinstance(table, exp.Table):
        parts = []
        for key in ("catalog", "db", "this"):
            part = table.args.get(key)
            if part is None:
                continue
            if not isinstance(part, exp.Identifier):
                raise CheckError(f"a table expression must name a table by identifiers; its "
                                 f"{key} is a {type(part).__name__}", code="E209",
                                 hint="build it as exp.Table(this=exp.to_identifier(name))")
            parts.append(part.name)
        extra = sorted(k for k, v in table.args.items()
                       if v and k not in ("catalog", "db", "this"))
        if extra:
            raise CheckError(f"a table expression must be a plain table name; it has "
                             f"{', '.join(extra)}", code="E209")
    elif isinstance(table, str):
        parts = [table]
    elif isinstance(table, tuple) and 1 <= len(table) <= 3:
        parts = list(table)
    else:
        raise CheckError(f"the table must be a name, a tuple of 2 or 3 names (schema, table) or "
                         f"a sqlglot exp.Table, got {type(table).__name__}", code="E209")
    for part in parts:
        if not isinstance(part, str) or not part or "\x00" in part \
                or len(part) > MAX_IDENTIFIER:
            raise CheckError(f"a table name part must be non-empty text of at most "
                             f"{MAX_IDENTIFIER} characters without NUL, got {part!r:.80}",
                             code="E209")
    names = [exp.to_identifier(p, quoted=True) for p in parts]
    return exp.Table(this=names[-1], db=names[-2] if len(names) > 1 else None,
                     catalog=names[-3] if len(names) > 2 else None)


def sql_select(
    table: Any,
    formulas: Mapping[str, str],
    schema: Any,
    *,
    dialect: str = "duckdb",
    profile: str = "strict",
    numbers: str | None = None,
    error_suffix: str = ERROR_SUFFIX,
    keep_columns: bool = True,
    registry: Any = None,
    limits: Any = None,
    column_types: Mapping[str, str] | None = None,
) -> str:
    """``SELECT *, <formula> AS name, <error> AS name__error FROM table`` in a dialect.
    ``numbers``: "decimal" when the table's Number columns are DECIMAL, "float" for DOUBLE;
    None: the dialect's own (`dialects.default_numbers`: "float" on SQLite, else "decimal").
    Every sub-expression read more than once is computed once, in a lateral subquery, so the
    SQL grows linearly with the formulas; it is refused (E411) past
    ``limits.max_sql_length`` characters. ``column_types``: the table's column SQL types as
    the engine reports them (name -> type text, e.g. from DuckDB's ``DESCRIBE``), when known:
    the SQL then casts and guards only what those types need (`kit.column_types`)."""
    from . import let as sql_let

    from ...interpreter.cache import compile_cached as compile_formula
    from ...limits import DEFAULT_LIMITS

    limits = limits or DEFAULT_LIMITS
    source_table = table_expression(table)
    check_output_names(formulas, error_suffix)
    programs = [(name, compile_formula(source, schema, profile=profile, limits=limits,
                                       registry=registry))
                for name, source in formulas.items()]
    forms = to_sql_forms([p.root for _, p in programs], dialect, numbers, limits,
                         column_types=column_types)
    query = build_select(source_table, [(name, name + error_suffix, form)
                                        for (name, _), form in zip(programs, forms)],
                         keep_columns, dialect)
    if len(query) > limits.max_sql_length:
        raise sql_let.sql_length_error(len(query), limits.max_sql_length)
    return query


def to_sql_form(root: Any, dialect: str, numbers: str | None = None, limits: Any = None,
                column_types: Mapping[str, str] | None = None) -> SqlForm:
    """One program as SQL; E411 when its rendered SQL would pass ``limits.max_sql_length``.
    ``column_types``: as `sql_select`'s."""
    from . import let as sql_let

    from ...limits import DEFAULT_LIMITS

    limits = limits or DEFAULT_LIMITS
    form = to_sql_forms([root], dialect, numbers, limits, column_types=column_types)[0]
    length = form.length()
    if length > limits.max_sql_length:
        raise sql_let.sql_length_error(length, limits.max_sql_length)
    return form


def _read_names(root: Any) -> set[str]:
    from ...interpreter import ir

    return {node.name for node in ir.ir_walk(root) if type(node) is ir.Var}


def to_sql_forms(roots: list[Any], dialect: str, numbers: str | None, limits: Any,
                 taken: Any = (), qualify: bool = True,
                 column_types: Mapping[str, str] | None = None) -> list[SqlForm]:
    """Programs compiled with one binder (their bindings are named apart from each other and
    from ``taken`` and the columns read). ``qualify``: references name their lateral subquery
    (False where the bindings become columns of a DataFrame instead). ``column_types``: the
    table's column SQL types (name -> type text), parsed once here (`kit.column_types`)."""
    from sqlglot.errors import UnsupportedError

    from . import compiler as sql_compiler
    from . import dialects as sql_dialects
    from . import pg_float
    from . import kit as sql_kit
    from . import let as sql_let

    if dialect not in sql_kit.DIALECTS:
        raise CheckError(f"unknown SQL dialect {dialect!r}; known: "
                         f"{', '.join(sql_kit.DIALECTS)}", code="E209")
    numbers = numbers or sql_dialects.default_numbers(dialect)
    sql_dialects.refuse_numbers(dialect, numbers, roots[0].span if roots else None)
    types = sql_kit.column_types(column_types)
    binder = None
    if dialect in sql_let.LATERAL_DIALECTS:
        binder = sql_let.Binder.for_names(set(taken).union(*[_read_names(r) for r in roots]))
    compiled: list[exp.Expr | None] = []
    token = sql_let._BINDER.set(binder)
    try:
        for root in roots:  # constants fold under the programs' own limits
            compiled += sql_compiler.to_sql(root, numbers=numbers,
                                           max_sql_length=limits.max_sql_length, limits=limits,
                                           column_types=types)
    finally:
        sql_let._BINDER.reset(token)
    bindings: tuple[tuple[str, exp.Expr, int], ...] = ()
    prefix = "_f"
    if binder is not None:
        compiled = binder.finish(compiled, qualify)
        bindings, prefix = tuple(binder.bindings()), binder.prefix
    # (PostgreSQL's float8 guards read what a binding holds: `pg_float.BINDINGS`)
    known = pg_float.BINDINGS.set(({name: e for name, e, _ in bindings}, {})) \
        if dialect == "postgres" else None
    try:
        compiled = [sql_dialects.adapt(e, dialect) for e in compiled]
        bindings = tuple((name, cast("exp.Expr", sql_dialects.adapt(e, dialect)), n)
                         for name, e, n in bindings)
    finally:
        if known is not None:
            pg_float.BINDINGS.reset(known)
    for i, root in enumerate(roots):  # refused here, not failing in the engine
        sql_dialects.refuse_unportable(compiled[2 * i:2 * i + 2], dialect, root.span)
    sql_dialects.refuse_unportable((e for _, e, _ in bindings), dialect,
                                   roots[0].span if roots else None)
    # each expression rendered once, here (the bindings once for all the forms)
    render = _Renderer(dialect)
    try:
        binding_texts = tuple(render(e) for _, e, _ in bindings)
        forms = []
        for i in range(len(roots)):
            value = cast("exp.Expr", compiled[2 * i])  # never None (only the error may be)
            error = compiled[2 * i + 1]
            texts = RenderedSql(render(value), None if error is None else render(error),
                                binding_texts)
            forms.append(SqlForm(value, error, dialect, bindings, prefix, texts))
    except UnsupportedError as exc:
        raise sql_dialects.unwritable(exc, dialect, roots[0].span if roots else None) from None
    return forms
