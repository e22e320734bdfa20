"""Docstring reading for tool descriptions: summary text plus per-argument docs.

Contract: `parse_docstring(doc)` never raises; it returns the description (everything before
the first section, paragraphs kept, wrapped lines joined) and a name -> text map of the
documented arguments. Parsing is `docstring_parser`'s: Google (`Args:`), reST/Sphinx (`:param
name: text`) and NumPy (`Parameters` + dashes); the reading with the most arguments wins, as in
its AUTO mode. What stays here is what the library does not decide for a tool schema: extra
Google sections (`Keyword Args:` are arguments; `Notes:`, `Todo:`... end the description rather
than being sent to a model as the tool's description), `Attributes` are not arguments, a reST
description ends at a known field (the library ends it at any line starting with ':', such as a
wrapped ':class:`X`'), and how text is joined. Known limits of the library, kept: a Google type
containing a colon (`a (:class:`X`)`) is misread, and in reST text after the last field joins
that field's description; a section no style can read stays in the description.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

import docstring_parser
from docstring_parser import google

#: Google sections beyond docstring_parser's defaults. Argument synonyms read as arguments; the
#: others are recognised only so that they end the description instead of joining it.
_GOOGLE_EXTRA = (
    google.Section("Keyword Args", "param", google.SectionType.MULTIPLE),
    google.Section("Keyword Arguments", "param", google.SectionType.MULTIPLE),
    google.Section("Other Parameters", "param", google.SectionType.MULTIPLE),
    *(google.Section(title, "other", google.SectionType.SINGULAR)
      for title in ("Note", "Notes", "Warning", "Warnings", "See Also", "References", "Todo")),
)
_GOOGLE = google.GoogleParser([*google.DEFAULT_SECTIONS, *_GOOGLE_EXTRA])

#: Entries that document something other than the call's arguments.
_NOT_ARGUMENTS = frozenset({"attribute", "attributes", "var", "ivar", "cvar"})
#: Section keys a style really recognised (docstring_parser's reST reader also turns any line
#: that starts with a role, such as ':class:`X`', into an entry; those do not count).
_KNOWN_KEYS = frozenset({
    "param", "parameter", "arg", "argument", "key", "keyword", "other_param", "receives", "type",
    "returns", "return", "rtype", "yields", "yield", "ytype", "raises", "raise", "except",
    "exception", "warns", "examples", "example", "deprecation", "deprecated", "see_also",
    "notes", "warnings", "references", "other", *_NOT_ARGUMENTS,
})
#: The reST fields that end a description; docstring_parser ends it at any line starting with ':'.
_REST_FIELD = re.compile(r"^:(?:" + "|".join(sorted(_KNOWN_KEYS - {"other", "see_also", "notes"}))
                         + r")\b", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Docstring:
    description: str = ""
    args: dict[str, str] = field(default_factory=dict)


def _join(text: str) -> str:
    # Paragraph breaks are kept; wrapped lines inside a paragraph become one line.
    paragraphs: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(paragraphs)


def _candidates(text: str) -> list[docstring_parser.Docstring]:
    parsed: list[docstring_parser.Docstring] = []
    styles = (docstring_parser.DocstringStyle.REST, docstring_parser.DocstringStyle.NUMPYDOC)
    try:
        parsed.append(_GOOGLE.parse(text))
    except docstring_parser.ParseError:
        pass  # not Google style, or malformed as such: the other styles may still read it
    for style in styles:
        try:
            parsed.append(docstring_parser.parse(text, style))
        except docstring_parser.ParseError:
            pass
    return parsed


def _arguments(parsed: docstring_parser.Docstring) -> dict[str, str]:
    args: dict[str, str] = {}
    for param in parsed.params:
        if param.args and param.args[0] in _NOT_ARGUMENTS:
            continue
        text = " ".join(line.strip() for line in (param.description or "").splitlines() if line.strip())
        for name in param.arg_name.split(","):  # NumPy documents `x1, x2 : array_like` together
            if name.strip().lstrip("*\\"):
                args[name.strip().lstrip("*\\")] = text
    return args


def parse_docstring(doc: str | None) -> Docstring:
    if not doc or not doc.strip():
        return Docstring()
    text = inspect.cleandoc(doc)
    candidates = _candidates(text)
    if not candidates:
        # Every style refused it (a malformed section): the text is still a description.
        return Docstring(description=_join(text))
    # As docstring_parser's AUTO, the reading with the most arguments wins, then the one with
    # the most recognised sections, then the first (Google).
    best = max(candidates, key=lambda d: (len(_arguments(d)),
                                          sum(1 for m in d.meta if m.args and m.args[0] in _KNOWN_KEYS)))
    if best.style is docstring_parser.DocstringStyle.REST:
        field_at = _REST_FIELD.search(text)
        description = text[:field_at.start()] if field_at else text
    else:
        short = best.short_description or ""
        long = best.long_description or ""
        separator = "\n\n" if best.blank_after_short_description else "\n"
        description = short + separator + long if long else short
    return Docstring(description=_join(description), args=_arguments(best))
