"""What an approval means, in plain words, built on the server: `describe(registry, approval)`.

Contract: from the tool's declaration (name, title, first line of its description, effect,
approval scope, approver kinds) and the approval's exact arguments, `describe` returns
``policy`` (why it waits: the rule, the effect class, who may approve, whether the requester may
approve their own request, until when) and ``summary`` (what will run, to what: the arguments
in order, for whom: the requester and tenant, and one sentence of all three). Nothing is
guessed: a tool the registry no longer serves says so instead of inventing a description.
Argument values are shown as JSON, each cut to a bounded length, so a huge argument cannot
bloat the inbox (the full arguments stay in ``args``).
"""

from __future__ import annotations

import json
from typing import Any

from ..jsonshape import is_object

MAX_VALUE_CHARS = 200  # one argument's value in the summary
MAX_ARGS_SHOWN = 20

_VERBS = {"read": "reads data", "write": "changes data", "destructive": "deletes or overwrites data"}


def _value(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS - 1] + "…"


def describe(registry: Any, approval: Any) -> dict[str, Any]:
    try:
        tool = registry.get(approval.tool)
    except Exception:  # the tool was removed or renamed since the approval was made
        tool = None
    try:
        args = json.loads(approval.args)
    except (TypeError, ValueError):
        args = None
    items = list(args.items()) if is_object(args) else []
    to_what = ", ".join(f"{k} = {_value(v)}" for k, v in items[:MAX_ARGS_SHOWN])
    if len(items) > MAX_ARGS_SHOWN:
        to_what += f", and {len(items) - MAX_ARGS_SHOWN} more"
    to_what = to_what or "no arguments"
    for_whom = (f"{approval.requester_kind} {approval.requester!r} of tenant "
                f"{approval.tenant!r}, on that tenant's data")
    if tool is None:
        what = f"tool {approval.tool!r} version {approval.version} (no longer served here)"
        policy: dict[str, Any] = {"decision": "approval_required", "rule": "the tool is not served any more: "
                  "approving it cannot make it run", "effect": None, "approval_scope": None,
                  "approver_kinds": [], "four_eyes": bool(getattr(registry, "four_eyes", False)),
                  "status": approval.status, "expires_at": approval.to_dict()["expires_at"]}
    else:
        doc = (tool.description or "").strip().splitlines()
        what = f"{tool.title or tool.name} ({tool.effect}: {_VERBS.get(tool.effect, tool.effect)})"
        if doc:
            what += f": {doc[0]}"
        four_eyes = bool(getattr(registry, "four_eyes", False))
        policy = {"decision": "approval_required",
                  "rule": f"a {tool.effect} tool runs only once a person with "
                          f"{tool.approval_scope!r} approves this exact call",
                  "effect": tool.effect, "approval_scope": tool.approval_scope,
                  "approver_kinds": sorted(tool.approver_kinds), "four_eyes": four_eyes,
                  "status": approval.status, "expires_at": approval.to_dict()["expires_at"]}
        if four_eyes:
            policy["rule"] += " (not the requester: four-eyes rule)"
    text = f"Run {approval.tool} v{approval.version} with {to_what}, for {for_whom}."
    return {"policy": policy,
            "summary": {"what": what, "to_what": to_what, "for_whom": for_whom, "text": text}}
