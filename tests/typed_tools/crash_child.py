"""Run as a subprocess by the crash test: execute one approved write, then die by SIGKILL
right after the side effect, before the registry can record the outcome.

argv: store kind, store location, schema, side-effect file, approval id, idempotency key.
"""

from __future__ import annotations

import sys
from pathlib import Path

from write_app import ACME_ALICE, build_registry, open_spec


def main() -> None:
    kind, where, schema, effect_file, approval_id, key = sys.argv[1:7]
    registry = build_registry(open_spec([kind, where, schema]), effect_file=Path(effect_file), die_after=True)
    registry.call("transfer", {"tenant": "acme", "to": "bob", "cents": 500, "api_key": "sk-live-123"},
                  principal=ACME_ALICE, approval=approval_id, idempotency_key=key)
    print("the registry returned: the kill did not happen", flush=True)
    sys.exit(3)


if __name__ == "__main__":
    main()
