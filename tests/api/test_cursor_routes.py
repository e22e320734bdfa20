"""The cursor routes (complete, hover, signature help) share one bound and one scope: a formula
over the service's limit is refused before any work (E401), a key without ``formulas:read`` is
refused (E702), and the signature help answers what the library's `signature_help` answers."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

import formulane
from conftest import Server, client, make_key
from test_http import envelope_ok

ROUTES = ("complete", "hover", "signature-help")


@pytest.mark.parametrize("route", ROUTES)
def test_cursor_routes_are_bounded(a: httpx.Client, route: str) -> None:
    long = "ROUND(" + "1+" * 5000 + "1, "
    envelope_ok(a.post(f"/v1/{route}", json={"formula": long, "cursor": len(long)}), "E401", 422)


@pytest.mark.parametrize("route", ROUTES)
def test_cursor_routes_need_formulas_read(server: Server, data_dir: Path, route: str) -> None:
    key = make_key(data_dir, "acme", "tools:read")
    with client(server, key) as c:
        envelope_ok(c.post(f"/v1/{route}", json={"formula": "ROUND(", "cursor": 6}), "E702", 403)


@pytest.mark.parametrize("text", ["ROUND(price, ", "IF(a, SUM(1, ", "LET(x, 1, y, 2, x + ",
                                  "TEXT(d, \"yyyy, mm\", ", "XLOOKUP(k, a, b, ", "1 + 2"])
def test_signature_help_is_the_library_s(a: httpx.Client, text: str) -> None:
    for cursor in range(len(text) + 1):
        got = a.post("/v1/signature-help", json={"formula": text, "cursor": cursor}).json()
        want = formulane.signature_help(text, cursor)
        assert got["signature"] == (None if want is None else want.to_dict()), (text, cursor)
