"""The JSON form of a formula: the AST as plain JSON, for models that emit structured output.

One JSON object per node, told apart by its key::

    {"number": "1.5"}            {"text": "abc"}           {"boolean": true}
    {"name": "price"}            {"list": [<expr>, ...]}   {"omitted": true}
    {"call": "IF", "args": [<expr>, ...]}                  (BLANK() is {"call": "BLANK", "args": []})
    {"op": "+", "args": [<left>, <right>]}                 (binary: ?? or and = <> < <= > >= & + - * / ^)
    {"op": "-", "args": [<operand>]}                       (unary: - + not, and % for percent)
    {"member": "total", "of": <expr>}                      (order.total)
    {"index": <expr>, "of": <expr>}                        (xs[1])
    {"lambda": ["acc", "x"], "body": <expr>}               (only as a call argument)

Numbers are decimal strings so they stay exact (``{"number": 0.1}`` is accepted too and read
from its shortest text; a leading ``-`` becomes a unary minus, as in the text syntax). Names and
functions are spelled as in the AST: ``{"name": "Unit Price"}`` is ``{Unit Price}`` in text, and
function names are upper-cased. Parentheses are not represented: the structure says it.

`json_form_schema()` is the JSON Schema (2020-12) of this form; ``root_object=True`` wraps it as
``{"formula": <expr>}`` for structured-output APIs that need an object at the root (OpenAI's
strict mode); `from_json` accepts both. `from_json` validates shape, names, depth and size
iteratively (no recursion, any nesting) and raises `JsonFormError` (a ParseError) whose
``json_path`` says where (``$.args[1].op``), or LimitExceeded.

Checking: `compile_json` turns the AST into its canonical source text with the printer and
compiles that with `formulane.compile`, so a JSON formula goes through exactly the checker,
limits and cache a text formula does (the compiler takes text, not ASTs, by design: one entry
point). A check error raised there carries ``json_path`` too: the deepest node whose span holds
the error, mapped back to the JSON it came from; ``source`` is the canonical text.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, cast

from ..errors import FormulaError, LimitExceeded, ParseError
from ..grammar import ast, parse, print_formula
from ..grammar.printer import format_name, format_number, function_name
from ..limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from ..interpreter.program import Program

__all__ = ["JsonFormError", "compile_json", "from_json", "json_form_schema", "to_json"]

_BINARY = frozenset(ast.BINARY_OPERATORS)
_UNARY = frozenset({"-", "+", "not", "%"})
_NUMBER_PATTERN = r"^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_KEYS = ("number", "text", "boolean", "name", "list", "call", "op", "member", "index", "lambda",
         "omitted")
#: The keys each form must have, exactly.
_SHAPES: dict[str, frozenset[str]] = {
    "number": frozenset({"number"}), "text": frozenset({"text"}),
    "boolean": frozenset({"boolean"}), "name": frozenset({"name"}), "list": frozenset({"list"}),
    "call": frozenset({"call", "args"}), "op": frozenset({"op", "args"}),
    "member": frozenset({"member", "of"}), "index": frozenset({"index", "of"}),
    "lambda": frozenset({"lambda", "body"}), "omitted": frozenset({"omitted"}),
}


class JsonFormError(ParseError):
    """A malformed JSON form; ``json_path`` locates the problem (``$`` is the root)."""

    def __init__(self, message: str, json_path: str, *, hint: str = "") -> None:
        super().__init__(f"invalid JSON form at {json_path}: {message}", code="E101",
                         hint=hint or "see json_form_schema() for the shape of each node")
        self.json_path = json_path


# ---- AST -> JSON -----------------------------------------------------------------------------

def to_json(formula: Any) -> dict[str, Any]:
    """The JSON form of a `Program`, an AST node or formula text (parsed first)."""
    tree: ast.Node
    if isinstance(formula, str):
        tree = parse(formula)
    elif hasattr(formula, "tree") and not isinstance(formula, tuple):
        tree = formula.tree
    else:
        tree = cast(ast.Node, formula)  # the remaining case: an AST node
    built: list[dict[str, Any]] = []
    stack: list[tuple[ast.Node, bool]] = [(tree, False)]
    while stack:  # post-order without recursion; children's forms are the last ones built
        node, ready = stack.pop()
        kids = ast.children(node)
        if not ready and kids:
            stack.append((node, True))
            stack.extend((k, False) for k in reversed(kids))
            continue
        args = built[len(built) - len(kids):] if kids else []
        if kids:
            del built[len(built) - len(kids):]
        built.append(_node_json(node, args))
    return built[0]


def _node_json(node: ast.Node, kids: list[dict[str, Any]]) -> dict[str, Any]:
    if isinstance(node, ast.Number):
        return {"number": format_number(node.value)}
    if isinstance(node, ast.String):
        return {"text": node.value}
    if isinstance(node, ast.Boolean):
        return {"boolean": node.value}
    if isinstance(node, ast.Name):
        return {"name": node.name}
    if isinstance(node, ast.ListLit):
        return {"list": kids}
    if isinstance(node, ast.Call):
        return {"call": node.name, "args": kids}
    if isinstance(node, (ast.Binary, ast.Unary)):
        return {"op": node.op, "args": kids}
    if isinstance(node, ast.Member):
        return {"member": node.name, "of": kids[0]}
    if isinstance(node, ast.Index):
        return {"index": kids[1], "of": kids[0]}
    if isinstance(node, ast.Lambda):
        return {"lambda": list(node.params), "body": kids[0]}
    if isinstance(node, ast.Omitted):
        return {"omitted": True}
    raise TypeError(f"not an AST node: {type(node).__name__}")


# ---- JSON -> AST -----------------------------------------------------------------------------

def from_json(obj: Any, *, limits: Limits | None = None) -> ast.Node:
    """The AST of a JSON form (see the module docstring); JsonFormError or LimitExceeded."""
    tree, _ = _from_json(obj, limits or DEFAULT_LIMITS)
    return tree


def _from_json(obj: Any, limits: Limits) -> tuple[ast.Node, dict[int, str]]:
    if isinstance(obj, dict) and set(obj) == {"formula"}:
        obj, root = obj["formula"], "$.formula"
    else:
        root = "$"
    paths: dict[int, str] = {}
    results: list[ast.Node] = []
    # (value, path, depth, role, children or None before they are built)
    work: list[tuple[Any, str, int, str, list[tuple[Any, str, str]] | None]] = [
        (obj, root, 1, "root", None)]
    count = 0
    while work:
        value, path, depth, role, kids = work.pop()
        if kids is None:
            count += 1
            if count > limits.max_nodes:
                raise LimitExceeded(f"too many nodes in the JSON form: more than "
                                    f"{limits.max_nodes} (at {path})", code="E402")
            if depth > limits.max_depth:
                raise LimitExceeded(f"the JSON form nests too deeply: more than "
                                    f"{limits.max_depth} levels (at {path})", code="E403")
            _, kids = _shape(value, path, role, limits)
            work.append((value, path, depth, role, kids))
            work.extend((child, cpath, depth + 1, crole, None)
                        for child, cpath, crole in reversed(kids))
            continue
        built = results[len(results) - len(kids):] if kids else []
        if kids:
            del results[len(results) - len(kids):]
        node = _build(value, built, path)
        paths[id(node)] = path
        results.append(node)
    return results[0], paths


def _shape(value: Any, path: str, role: str,
           limits: Limits) -> tuple[str, list[tuple[Any, str, str]]]:
    """Check one node's own shape; its children as (value, path, role)."""
    if not isinstance(value, dict):
        raise JsonFormError(f"expected an object such as {{\"call\": ...}}, got "
                            f"{_json_type(value)}", path)
    kinds = [k for k in _KEYS if k in value]
    if len(kinds) != 1:
        what = "no known key" if not kinds else "several kinds: " + ", ".join(kinds)
        raise JsonFormError(f"a node has exactly one of the keys {', '.join(_KEYS)}; this "
                            f"object has {what}", path)
    kind = kinds[0]
    extra = set(value) - _SHAPES[kind]
    missing = _SHAPES[kind] - set(value)
    if missing:
        raise JsonFormError(f"a {kind!r} node needs {', '.join(sorted(missing))}", path)
    if extra:
        raise JsonFormError(f"unexpected key(s) in a {kind!r} node: "
                            f"{', '.join(sorted(map(str, extra)))}", path)
    if kind == "lambda" and role != "argument":
        raise JsonFormError("a lambda can only be an argument of a call (MAP, FILTER, ...)", path)
    if kind == "omitted" and role != "argument":
        raise JsonFormError("an omitted argument can only be a call argument", path)
    if kind in ("list", "call", "op"):
        key = "list" if kind == "list" else "args"
        items = value[key]
        if not isinstance(items, list):
            raise JsonFormError(f"'{key}' must be an array, got {_json_type(items)}",
                                f"{path}.{key}")
        if len(items) > limits.max_arguments:
            raise LimitExceeded(f"too many arguments: {len(items)} (limit "
                                f"{limits.max_arguments}) at {path}.{key}", code="E404")
        if kind == "call" and len(items) == 1 and isinstance(items[0], dict) \
                and "omitted" in items[0]:
            raise JsonFormError("a call's only argument cannot be omitted: write "
                                "{\"args\": []}", f"{path}.args[0]")
        role_of = "argument" if kind == "call" else "operand"
        return kind, [(item, f"{path}.{key}[{i}]", role_of) for i, item in enumerate(items)]
    if kind == "member":
        return kind, [(value["of"], f"{path}.of", "operand")]
    if kind == "index":
        return kind, [(value["of"], f"{path}.of", "operand"),
                      (value["index"], f"{path}.index", "operand")]
    if kind == "lambda":
        return kind, [(value["body"], f"{path}.body", "operand")]
    return kind, []


def _build(value: dict[str, Any], kids: list[ast.Node], path: str) -> ast.Node:
    if "number" in value:
        return _number(value["number"], f"{path}.number")
    if "text" in value:
        text = value["text"]
        if not isinstance(text, str):
            raise JsonFormError(f"'text' must be a string, got {_json_type(text)}",
                                f"{path}.text")
        return ast.String(text)
    if "boolean" in value:
        flag = value["boolean"]
        if not isinstance(flag, bool):
            raise JsonFormError(f"'boolean' must be true or false, got {_json_type(flag)}",
                                f"{path}.boolean")
        return ast.Boolean(flag)
    if "name" in value:
        return ast.Name(_name(value["name"], f"{path}.name"))
    if "list" in value:
        return ast.ListLit(tuple(kids))
    if "call" in value:
        name = value["call"]
        if not isinstance(name, str):
            raise JsonFormError(f"'call' must be a function name, got {_json_type(name)}",
                                f"{path}.call")
        try:
            upper = function_name(name)
        except ValueError:
            raise JsonFormError(f"{name!r} is not a function name", f"{path}.call",
                                hint="function names look like SUM, IF or STDEV.S") from None
        if upper == "LAMBDA":
            raise JsonFormError("write a lambda as {\"lambda\": [params], \"body\": ...}",
                                f"{path}.call")
        return ast.Call(upper, tuple(kids))
    if "op" in value:
        return _operator(value["op"], kids, path)
    if "member" in value:
        return ast.Member(kids[0], _name(value["member"], f"{path}.member"))
    if "index" in value:
        return ast.Index(kids[0], kids[1])
    if "lambda" in value:
        params = value["lambda"]
        if not isinstance(params, list):
            raise JsonFormError(f"'lambda' must be an array of parameter names, got "
                                f"{_json_type(params)}", f"{path}.lambda")
        names = tuple(_name(p, f"{path}.lambda[{i}]") for i, p in enumerate(params))
        return ast.Lambda(names, kids[0])
    if value["omitted"] is not True:
        raise JsonFormError("'omitted' must be true", f"{path}.omitted")
    return ast.Omitted()


def _operator(op: Any, kids: list[ast.Node], path: str) -> ast.Node:
    if not isinstance(op, str):
        raise JsonFormError(f"'op' must be an operator, got {_json_type(op)}", f"{path}.op")
    canonical = {"==": "=", "!=": "<>", "&&": "and", "||": "or", "!": "not"}.get(op, op)
    canonical = canonical.lower() if canonical.lower() in ("and", "or", "not") else canonical
    if len(kids) == 2 and canonical in _BINARY:
        return ast.Binary(canonical, kids[0], kids[1])
    if len(kids) == 1 and canonical in _UNARY:
        return ast.Unary(canonical, kids[0])
    if canonical in _BINARY or canonical in _UNARY:
        arity = "1 or 2" if canonical in ("-", "+") else "2" if canonical in _BINARY else "1"
        raise JsonFormError(f"operator {op!r} takes {arity} argument(s), got {len(kids)}",
                            f"{path}.args")
    raise JsonFormError(f"unknown operator {op!r}", f"{path}.op",
                        hint="operators: " + " ".join(ast.BINARY_OPERATORS) + " not %")


def _number(raw: Any, path: str) -> ast.Node:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise JsonFormError(f"'number' must be a decimal string such as \"1.5\", got "
                            f"{_json_type(raw)}", path)
    text = repr(raw) if isinstance(raw, float) else str(raw)
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise JsonFormError(f"{text!r} is not a number", path,
                            hint="numbers look like \"12\", \"1.5\", \"-3\" or \"1e-3\"") from None
    if not value.is_finite():
        raise JsonFormError(f"{text!r} is not a finite number", path)
    if value and value.adjusted() > 307:
        raise JsonFormError(f"{text!r} is too large: numbers are below 1e308", path)
    # copy_abs, not abs(): arithmetic would round to the context's precision.
    if value.is_signed() and value != 0:
        return ast.Unary("-", ast.Number(value.copy_abs()))
    return ast.Number(value.copy_abs())


def _name(raw: Any, path: str) -> str:
    if not isinstance(raw, str):
        raise JsonFormError(f"a name must be a string, got {_json_type(raw)}", path)
    try:
        format_name(raw)
    except ValueError:
        raise JsonFormError(f"{raw!r} cannot be a name (empty, or contains '}}')", path) from None
    return raw


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# ---- checking --------------------------------------------------------------------------------

def compile_json(obj: Any, schema: Any = None, *, profile: str = "strict",
                 limits: Limits | None = None, registry: Any = None) -> Program:
    """Check and compile a JSON form: the canonical text of its AST through `formulane.compile`
    (see the module docstring); errors carry ``json_path``."""
    from .. import compile as compile_formula

    tree, paths = _from_json(obj, limits or DEFAULT_LIMITS)
    try:
        source = print_formula(tree)
    except ValueError as exc:  # validated above, so this is a form the printer cannot spell
        raise JsonFormError(str(exc), "$") from None
    try:
        return compile_formula(source, schema, profile=profile, limits=limits, registry=registry)
    except FormulaError as exc:
        exc.json_path = _path_of(exc, source, tree, paths)  # type: ignore[attr-defined]
        raise


def _path_of(exc: FormulaError, source: str, tree: ast.Node, paths: dict[int, str]) -> str:
    span = exc.span
    if span is None:
        return paths.get(id(tree), "$")
    try:
        reparsed = parse(source, limits=Limits(max_source_length=max(len(source), 8192),
                                               max_nodes=10**6, max_depth=200,
                                               max_arguments=10**6))
    except FormulaError:
        return paths.get(id(tree), "$")
    best = paths.get(id(tree), "$")
    pairs = [(reparsed, tree)]
    while pairs:  # the two trees have the same shape: walk them together
        printed, built = pairs.pop()
        if printed.span.start <= span.start and span.end <= printed.span.end:
            best = paths.get(id(built), best)
            pairs.extend(zip(ast.children(printed), ast.children(built)))
    return best


# ---- the schema ------------------------------------------------------------------------------

def json_form_schema(*, root_object: bool = False) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the JSON form. Every object closes its properties
    and requires all of them, as strict structured-output modes want; ``root_object=True``
    puts the expression under ``{"formula": ...}`` for APIs that need an object root."""
    ref = {"$ref": "#/$defs/expr"}
    exprs = {"type": "array", "items": ref}

    def node(description: str, **props: Any) -> dict[str, Any]:
        return {"type": "object", "description": description, "properties": props,
                "required": list(props), "additionalProperties": False}

    defs = {
        "expr": {"anyOf": [{"$ref": f"#/$defs/{k}"} for k in _KEYS]},
        "number": node("A number literal as a decimal string (exact).",
                       number={"type": "string", "pattern": _NUMBER_PATTERN}),
        "text": node("A text literal.", text={"type": "string"}),
        "boolean": node("TRUE or FALSE.", boolean={"type": "boolean"}),
        "name": node("A variable, LET name or lambda parameter.",
                     name={"type": "string", "minLength": 1}),
        "list": node("A list literal [a, b, ...].", list=exprs),
        "call": node("A function call; BLANK() is {\"call\": \"BLANK\", \"args\": []}.",
                     call={"type": "string", "description": "function name, e.g. SUM"},
                     args=exprs),
        "op": node("An operator: two args for binary operators, one for - + not % (unary).",
                   op={"type": "string", "enum": [*ast.BINARY_OPERATORS, "not", "%"]},
                   args={**exprs, "minItems": 1, "maxItems": 2}),
        "member": node("A record field: {\"member\": \"total\", \"of\": order}.",
                       member={"type": "string", "minLength": 1}, of=ref),
        "index": node("A list item by 1-based position: xs[i].", index=ref, of=ref),
        "lambda": node("A lambda (only as a call argument): (params) => body.",
                       **{"lambda": {"type": "array", "items": {"type": "string",
                                                                 "minLength": 1}},
                          "body": ref}),
        "omitted": node("An argument left out (its default is used).",
                        omitted={"type": "boolean", "enum": [True]}),
    }
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "formulane formula (JSON form)",
    }
    if root_object:
        schema.update({"type": "object", "properties": {"formula": ref},
                       "required": ["formula"], "additionalProperties": False})
    else:
        schema["$ref"] = "#/$defs/expr"
    schema["$defs"] = defs
    return schema
