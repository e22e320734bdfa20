"""One error hierarchy for the whole library.

Every problem a user or a model can cause is a `Diagnostic` (stable code, message, span, label,
hint, machine-applicable fixes) carried by a `FormulaError` subclass. Spans are rendered into
caret snippets only at the edge (`render`), so the CLI, the API and tool results show the same
text. Codes are stable: E1xx parse, E2xx check, E3xx evaluation, E4xx limits, E5xx tools,
E6xx escalation, E7xx the HTTP service, E9xx internal faults. Error *values* (`#DIV/0!`...) are data, see `values`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .source import Span, line_col, line_text

#: Every stable code with a one-line title; docs and tests read this table.
CODES: dict[str, str] = {
    # parse
    "E101": "unexpected token",
    "E102": "unexpected end of formula",
    "E103": "unterminated string",
    "E104": "unexpected character",
    "E105": "unbalanced parentheses or brackets",
    "E106": "unterminated comment",
    "E107": "invalid number",
    "E108": "lambda outside a higher-order function",
    # check
    "E201": "unknown name",
    "E202": "type mismatch",
    "E203": "unknown function",
    "E204": "wrong number of arguments",
    "E205": "nullable value used where a value is required",
    "E206": "ambiguous operator precedence",
    "E207": "unknown field",
    "E208": "invalid LET or LAMBDA",
    "E209": "invalid schema",
    "E210": "comparison of different types",
    "E211": "argument must be a constant",
    "E212": "untyped value must be narrowed",
    "E213": "a backend cannot express this formula",
    "E214": "result type is not the one asked for (returns=)",
    # evaluation (inputs and runtime faults that are not error values)
    "E301": "invalid input value",
    "E302": "missing variable",
    "E303": "input does not match the schema",
    "E304": "result is not of the type asked for (returns=)",
    # limits
    "E401": "formula too long",
    "E402": "too many nodes",
    "E403": "nesting too deep",
    "E404": "too many arguments",
    "E405": "cost budget exceeded",
    "E406": "text too long",
    "E407": "list too long",
    "E408": "deadline exceeded",
    "E409": "static cost bound over budget",
    "E410": "too many diagnostics",
    "E411": "generated SQL too long",
    "E413": "memory budget exceeded",
    "E414": "explanation too large",
    # tools
    "E501": "unknown tool",
    "E502": "invalid tool arguments",
    "E503": "not authorized",
    "E504": "approval required",
    "E505": "tool failed",
    "E506": "invalid tool definition",
    "E507": "schema cannot be exported",
    # escalation
    "E601": "escalation refused",
    "E602": "sandbox unavailable",
    "E603": "invalid sandbox job",
    "E604": "cannot translate code to a formula",
    "E605": "draft fails review",
    # service (formulane serve)
    "E701": "not authenticated",
    "E702": "missing scope",
    "E703": "not found",
    "E704": "rate limit exceeded",
    "E705": "request too large",
    "E706": "invalid request",
    "E707": "conflict",
    "E708": "known-answer cases failed",
    "E709": "service unavailable",
    # internal
    "E901": "internal error",
}


@dataclass(frozen=True, slots=True)
class Fix:
    """A machine-applicable edit: replace ``span`` of the source with ``replacement``."""

    span: Span
    replacement: str
    description: str = ""

    def apply(self, source: str) -> str:
        return source[: self.span.start] + self.replacement + source[self.span.end :]

    def to_dict(self) -> dict[str, Any]:
        return {
            "span": self.span.to_dict(),
            "replacement": self.replacement,
            "description": self.description,
        }


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem (or warning) at one place in the source."""

    code: str
    message: str
    span: Span | None = None
    label: str = ""
    hint: str = ""
    fixes: tuple[Fix, ...] = ()
    severity: str = "error"  # "error" | "warning"

    def render(self, source: str | None = None, *, audience: str = "developer",
               translate: Any = None) -> str:
        """A caret snippet; ``audience="end_user"``: plain words (`formulane.messages`)."""
        if audience == "end_user":
            from .messages import render_end_user

            return render_end_user(self, source, translate=translate)
        return render(self, source)

    def to_dict(self, source: str | None = None) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "span": self.span.to_dict(source) if self.span is not None else None,
            "label": self.label,
            "hint": self.hint,
            "fixes": [f.to_dict() for f in self.fixes],
            "rendered": render(self, source),
        }


class FormulaError(Exception):
    """Base of every error this library raises on purpose.

    ``.code``, ``.message``, ``.span``, ``.hint``, ``.fixes`` describe the first diagnostic;
    ``.diagnostics`` holds all of them (the checker collects several before giving up).
    """

    default_code = "E901"

    def __init__(
        self,
        message: str | Diagnostic,
        *,
        code: str | None = None,
        span: Span | None = None,
        label: str = "",
        hint: str = "",
        fixes: Iterable[Fix] = (),
        source: str | None = None,
        diagnostics: Iterable[Diagnostic] = (),
    ) -> None:
        if isinstance(message, Diagnostic):
            primary = message
        else:
            primary = Diagnostic(
                code=code or self.default_code,
                message=message,
                span=span,
                label=label,
                hint=hint,
                fixes=tuple(fixes),
            )
        rest = tuple(d for d in diagnostics if d is not primary)
        self.diagnostics: tuple[Diagnostic, ...] = (primary, *rest)
        self.source = source
        super().__init__(primary.message)

    # The first diagnostic's fields, for the common case of one problem.
    @property
    def primary(self) -> Diagnostic:
        return self.diagnostics[0]

    @property
    def code(self) -> str:
        return self.primary.code

    @property
    def message(self) -> str:
        return self.primary.message

    @property
    def span(self) -> Span | None:
        return self.primary.span

    @property
    def hint(self) -> str:
        return self.primary.hint

    @property
    def fixes(self) -> tuple[Fix, ...]:
        return self.primary.fixes

    def with_source(self, source: str) -> "FormulaError":
        if self.source is None:
            self.source = source
        return self

    def render(self, source: str | None = None, *, audience: str = "developer",
               translate: Any = None) -> str:
        src = source if source is not None else self.source
        if audience == "end_user":
            return "\n\n".join(d.render(src, audience=audience, translate=translate)
                               for d in self.diagnostics)
        return "\n".join(render(d, src) for d in self.diagnostics)

    def to_dict(self, source: str | None = None) -> dict[str, Any]:
        src = source if source is not None else self.source
        out = self.primary.to_dict(src)
        out["diagnostics"] = [d.to_dict(src) for d in self.diagnostics]
        return out

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class ParseError(FormulaError):
    default_code = "E101"


class CheckError(FormulaError):
    default_code = "E202"


class Unsupported(FormulaError):
    """A backend (polars, SQL) has no faithful form for part of a checked program. Raised when
    compiling for that backend, never while running; ``.function``, ``.backend`` and
    ``.reason`` say what and why, so a router can pick another lane."""

    default_code = "E213"

    def __init__(self, message: str, *, function: str, backend: str, reason: str,
                 **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.function = function
        self.backend = backend
        self.reason = reason


class EvalError(FormulaError):
    default_code = "E301"


class LimitExceeded(FormulaError):
    """A budget ran out. No formula can catch it (IFERROR does not see it)."""

    default_code = "E405"


class ToolError(FormulaError):
    default_code = "E505"


class EscalationError(FormulaError):
    default_code = "E601"


class ServiceError(FormulaError):
    """A request the HTTP service (`formulane serve`) refuses: auth, scope, not found, limits."""

    default_code = "E706"


class InternalError(FormulaError):
    """A fault in formulane itself; reported, never a bare Python traceback."""

    default_code = "E901"


def render(diag: Diagnostic, source: str | None = None) -> str:
    """Render one diagnostic as a caret snippet (rustc style)."""
    head = f"{diag.severity}[{diag.code}]: {diag.message}"
    lines = [head]
    if diag.span is not None and source is not None:
        line, col = line_col(source, diag.span.start)
        text = line_text(source, line)
        end_line, _ = line_col(source, diag.span.end)
        # A span running past its first line is underlined to the end of that line.
        if end_line == line:
            width = max(1, diag.span.end - diag.span.start)
        else:
            width = max(1, len(text) - col + 1)
        gutter = " " * len(str(line))
        lines.append(f"{gutter}--> {line}:{col}")
        lines.append(f"{line} | {text}")
        caret = " " * (col - 1) + "^" * width
        lines.append(f"{gutter} | {caret}" + (f" {diag.label}" if diag.label else ""))
        pad = gutter + " "
    else:
        pad = " "
    if diag.hint:
        lines.append(f"{pad}= hint: {diag.hint}")
    for fix in diag.fixes:
        if source is not None:
            lines.append(f"{pad}= fix: {fix.apply(source)}")
        else:
            lines.append(f"{pad}= fix: {fix.replacement}")
    return "\n".join(lines)
