"""The served OpenAPI document: a snapshot (the route contract), an example on every request
body, and schemathesis against the running server (no 5xx, responses match the schema)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from conftest import Server

SNAPSHOT = Path(__file__).parent / "openapi.json"


def test_openapi_snapshot(server: Server) -> None:
    served = httpx.get(server.base + "/openapi.json").json()
    if os.environ.get("FORMULANE_UPDATE_SNAPSHOTS") == "1" or not SNAPSHOT.exists():
        SNAPSHOT.write_text(json.dumps(served, indent=1, sort_keys=True) + "\n")
    assert served == json.loads(SNAPSHOT.read_text()), \
        "the API changed: review it, then FORMULANE_UPDATE_SNAPSHOTS=1 python -m pytest " \
        "tests/api/test_openapi.py"


def test_every_request_body_has_an_example(server: Server) -> None:
    spec = httpx.get(server.base + "/openapi.json").json()
    schemas = spec["components"]["schemas"]
    missing = []
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            ref = body["schema"].get("$ref", "") or next(
                (x["$ref"] for x in body["schema"].get("anyOf", []) if "$ref" in x), "")
            schema = schemas.get(ref.rsplit("/", 1)[-1], body["schema"])
            has = "examples" in schema or "example" in body or any(
                "examples" in p for p in schema.get("properties", {}).values())
            if not has:
                missing.append(f"{method.upper()} {path}")
    assert not missing, missing


def test_schemathesis_no_server_errors(server: Server, keys: dict[str, str]) -> None:
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from schemathesis.checks import not_a_server_error, response_schema_conformance

    schema = schemathesis.openapi.from_url(server.base + "/openapi.json")
    failures: list[str] = []
    header = {"Authorization": f"Bearer {keys['a']}"}
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.endswith("/events"):
            continue  # a stream open until the job ends

        @settings(max_examples=8, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def run(case: object) -> None:
            response = case.call(headers=header, timeout=30)  # type: ignore[attr-defined]
            try:
                case.validate_response(  # type: ignore[attr-defined]
                    response, checks=[not_a_server_error, response_schema_conformance])
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                failures.append(f"{operation.method.upper()} {operation.path}: "
                                f"{str(exc)[:300]}")
                raise

        try:
            run()
        except Exception:  # noqa: BLE001
            pass
    assert not failures, "\n".join(failures[:20])
