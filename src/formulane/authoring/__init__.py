"""The authoring kit: what editors and models need to write formulas (see docs/authoring.md).

* `complete(source, cursor, schema)` and `signature_help(source, cursor)`: completion and the
  call being written, robust on the broken text being typed (`completion`);
* `hover`, `type_at`, `diagnose`: docs and types under the pointer or a selection, and every
  problem with its span (`hover`);
* `format(source, width=80)`: the canonical form, comments kept, broken into lines
  (`formatter`);
* `to_json` / `from_json` / `json_form_schema` / `compile_json`: the AST as JSON, for
  structured output (`jsonform`);
* the language server: ``formulane lsp`` / `formulane.authoring.lsp.main` (`lsp`, needs
  pygls), with formulas in ``.formula`` files and in YAML/JSON configs (`documents`);
* ``formulane fmt``: the formatter over files and stdin (`fmt`); both sub-commands reach
  `formulane.cli` through `cli_commands` (``add_parser(subparsers)``, ``run(args)``).

The facade (`formulane.complete`, `format`, `to_json`, `from_json`...) wraps these.

`Program.explain(variables)` (in the interpreter) is the fourth tool; the language server
serves it as the ``formulane.explain`` command.
"""

from __future__ import annotations

from .completion import (
    CompletionItem, ParameterInfo, SignatureHelp, SignatureInfo, complete, signature_help,
)
from .formatter import format, format_tree
from .hover import HoverInfo, diagnose, hover, type_at
from .jsonform import JsonFormError, compile_json, from_json, json_form_schema, to_json

__all__ = [
    "CompletionItem", "HoverInfo", "JsonFormError", "ParameterInfo", "SignatureHelp",
    "SignatureInfo", "compile_json", "complete", "diagnose", "format", "format_tree",
    "from_json", "hover", "json_form_schema", "signature_help", "to_json", "type_at",
]
