"""The message catalogue: every diagnostic code in plain words for end users, in one place.

`CATALOGUE` maps each stable code (`formulane.errors.CODES`) to a `Message`: a ``title``
and a ``todo`` (what to do) written for someone who types a formula into an application, not
for its programmer: no type signatures, no internals. The English text is the message id, as
gettext expects (``msgid``), so an application translates by passing its ``gettext`` (or any
``str -> str``, such as a dict's ``get``) to `render_end_user`; `pot` writes the catalogue as a
``.pot`` template for translators.

`render_end_user(diagnostic, source)` is the end-user rendering (``Diagnostic.render(source,
audience="end_user")``): where the problem is in words and a quote of the spot, the plain
title, what to do, and the corrected formula when a machine fix exists. The developer
rendering (`formulane.errors.render`, caret snippets) is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import CODES, Diagnostic
from .source import line_col

__all__ = ["CATALOGUE", "Message", "pot", "render_end_user"]


@dataclass(frozen=True)
class Message:
    title: str
    todo: str


_M = Message
CATALOGUE: dict[str, Message] = {
    "E101": _M("Something in the formula is in the wrong place.",
               "Check the marked spot for a missing operator, comma or bracket."),
    "E102": _M("The formula stops before it is finished.",
               "Complete the formula: something is missing at the end."),
    "E103": _M("A piece of text is not closed.", 'Add the closing quote (").'),
    "E104": _M("The formula contains a character it cannot use.",
               "Remove or replace the marked character."),
    "E105": _M("The brackets do not match.",
               "Make sure every opening bracket has its closing bracket."),
    "E106": _M("A comment is not closed.", "Close the comment with */."),
    "E107": _M("A number is written in a way the formula cannot read.",
               "Write numbers with digits and a point for decimals, like 1.5."),
    "E108": _M("A function definition (=>) is used where it cannot be.",
               "Use x => ... only as an argument of MAP, FILTER, REDUCE and similar."),
    "E201": _M("The formula uses a name it does not know.",
               "Check the spelling, or pick one of the available fields."),
    "E202": _M("A value of the wrong kind is used.",
               "Use a value of the kind the marked spot needs (a number, text, a date...)."),
    "E203": _M("The formula calls a function that does not exist.",
               "Check the function's name."),
    "E204": _M("A function gets too many or too few values.",
               "Give the function the number of values it needs."),
    "E205": _M("A value that may be empty is used where a value is required.",
               "Say what to use when it is empty, for example: field ?? 0."),
    "E206": _M("The order in which this is calculated is unclear.",
               "Add brackets around the part that should be calculated first."),
    "E207": _M("The formula uses a field that does not exist.",
               "Check the field's name."),
    "E208": _M("A LET or LAMBDA is written incorrectly.",
               "Give each name a value, and end with the result."),
    "E209": _M("The list of available fields is invalid.",
               "Ask the application's administrator to fix the field definitions."),
    "E210": _M("Two values of different kinds are compared.",
               "Compare a number with a number, a text with a text, a date with a date."),
    "E211": _M("This value must be written directly, not calculated.",
               "Type the value itself at the marked spot."),
    "E212": _M("A value of unknown kind must be checked first.",
               "Check its kind first, for example with ISNUMBER(...)."),
    "E213": _M("This formula cannot run where it is used.",
               "Use a simpler formula, or ask the administrator which functions are allowed."),
    "E214": _M("The formula gives a different kind of result than this place needs.",
               "Change the formula so that it always gives the kind of value asked for, "
               "with a value for blanks."),
    "E301": _M("One of the input values cannot be used.",
               "Check the input values given to the formula."),
    "E302": _M("An input value the formula needs is missing.",
               "Provide a value for every field the formula uses."),
    "E303": _M("An input value is not of the expected kind.",
               "Check the input values given to the formula."),
    "E304": _M("The formula gave an error or no value where a result was needed.",
               "Catch the error in the formula with IFERROR, or check the input values."),
    "E401": _M("The formula is too long.", "Shorten the formula."),
    "E402": _M("The formula is too large.", "Split it into smaller formulas."),
    "E403": _M("The formula is nested too deeply.", "Use fewer brackets inside brackets."),
    "E404": _M("A function gets too many values.", "Give it fewer values."),
    "E405": _M("The formula takes too much work to calculate.",
               "Simplify it, or work on smaller lists."),
    "E406": _M("A text became too long.", "Work with shorter texts."),
    "E407": _M("A list became too long.", "Work with shorter lists."),
    "E408": _M("The formula took too long to calculate.", "Simplify it."),
    "E409": _M("The formula could take too much work to calculate.",
               "Simplify it, or work on smaller lists."),
    "E410": _M("The formula has too many problems to list.", "Fix the first ones and retry."),
    "E411": _M("The formula is too large to run as SQL.",
               "Simplify the formula, or run it on the scalar or polars engine."),
    "E413": _M("The formula needs too much memory.", "Work on smaller lists or texts."),
    "E414": _M("The explanation of this formula is too large to show.",
               "Explain a smaller part of the formula."),
    "E501": _M("The requested action does not exist.", "Check the action's name."),
    "E502": _M("The action got values it cannot use.", "Check the values given to it."),
    "E503": _M("You are not allowed to do this.", "Ask an administrator for access."),
    "E504": _M("This action needs someone's approval first.", "Ask for approval, then retry."),
    "E505": _M("The action failed.", "Try again later, or contact support."),
    "E506": _M("The action is defined incorrectly.", "Contact the application's administrator."),
    "E507": _M("The action's description cannot be shared.",
               "Contact the application's administrator."),
    "E601": _M("This task cannot be run.", "Rephrase the task, or contact support."),
    "E602": _M("The place to run this task is not available.", "Try again later."),
    "E603": _M("The task is set up incorrectly.", "Check the task's settings."),
    "E604": _M("This code cannot be turned into a formula.", "Write it as a formula instead."),
    "E605": _M("The draft did not pass review.", "Revise the draft and submit it again."),
    "E701": _M("You are not signed in.", "Sign in and retry."),
    "E702": _M("Your access does not cover this.", "Ask an administrator for access."),
    "E703": _M("What you asked for was not found.", "Check the name or the link."),
    "E704": _M("Too many requests.", "Wait a moment, then retry."),
    "E705": _M("The request is too large.", "Send less at once."),
    "E706": _M("The request is invalid.", "Check what was sent."),
    "E707": _M("This conflicts with a change made at the same time.", "Reload and retry."),
    "E708": _M("The formula gives wrong answers on its known examples.",
               "Fix the formula so its examples give the expected answers."),
    "E709": _M("The service is not available right now.", "Try again later."),
    "E901": _M("Something went wrong on our side.", "Try again; if it persists, contact support."),
}

_UNKNOWN = Message("There is a problem with the formula.", "Check the formula.")
_FRAME = {
    "error": "Problem",
    "warning": "Check",
    "where": "At {where}:",
    "at": "character {col}",
    "at_line": "line {line}, character {col}",
    "todo": "What to do: {todo}",
    "fix": "Suggested formula: {fix}",
}


def _identity(text: str) -> str:
    return text


def render_end_user(diag: Diagnostic, source: str | None = None, *,
                    translate: Callable[[str], str] | None = None) -> str:
    """``diag`` in plain words (see the module doc); ``translate`` maps each English message
    id to its translation (gettext's ``gettext``), the English text when None."""
    t = translate or _identity
    msg = CATALOGUE.get(diag.code, _UNKNOWN)
    lines = [f"{t(_FRAME[diag.severity if diag.severity in _FRAME else 'error'])}: "
             f"{t(msg.title)}"]
    if diag.span is not None and source is not None:
        line, col = line_col(source, diag.span.start)
        where = (t(_FRAME["at_line"]) if "\n" in source else t(_FRAME["at"])).format(
            line=line, col=col)
        quoted = source[diag.span.start:diag.span.end].strip() or source.strip()
        if len(quoted) > 40:
            quoted = quoted[:37] + "..."
        lines.append(t(_FRAME["where"]).format(where=where) + f" {quoted}")
    lines.append(t(_FRAME["todo"]).format(todo=t(msg.todo)))
    if diag.fixes and source is not None:
        lines.append(t(_FRAME["fix"]).format(fix=diag.fixes[0].apply(source)))
    return "\n".join(lines)


def pot() -> str:
    """The catalogue as a gettext ``.pot`` template (msgid = the English text; the code in a
    translator comment)."""
    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    out = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', ""]
    seen: set[str] = set()
    entries = [(f"frame {k}", v) for k, v in _FRAME.items()] + \
        [(code, text) for code, m in CATALOGUE.items() for text in (m.title, m.todo)]
    for ref, text in entries:
        if text in seen:
            continue
        seen.add(text)
        out += [f"#. {ref}", f"msgid {q(text)}", 'msgstr ""', ""]
    return "\n".join(out)


def _check_complete() -> None:  # every stable code has end-user text (tests call this)
    missing = sorted(set(CODES) - set(CATALOGUE))
    if missing:
        raise AssertionError(f"codes without end-user text: {missing}")
