"""The formula grammar: ``parse`` text into an AST and ``print_formula`` it back canonically.

``parse(source, limits=None)`` raises only ``ParseError`` or ``LimitExceeded``;
``parse(print_formula(ast)) == ast`` for every AST ``parse`` can return. ``ast`` is the node
module (``from formulane.grammar import ast``). ``tokenize(source)`` is the never-failing lexer
editors use (comments kept, broken input tokenized as far as it goes).
"""

from __future__ import annotations

from . import ast
from .parser import Token, parse, tokenize
from .printer import print_formula, to_source

__all__ = ["Token", "ast", "parse", "print_formula", "to_source", "tokenize"]
