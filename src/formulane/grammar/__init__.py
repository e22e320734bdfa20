"""The formula grammar: ``parse`` text into an AST and ``print_formula`` it back canonically.

``parse(source, limits=None)`` raises only ``ParseError`` or ``LimitExceeded``;
``parse(print_formula(ast)) == ast`` for every AST ``parse`` can return. ``ast`` is the node
module (``from formulane.grammar import ast``).
"""

from __future__ import annotations

from . import ast
from .parser import parse
from .printer import print_formula, to_source

__all__ = ["ast", "parse", "print_formula", "to_source"]
