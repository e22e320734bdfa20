"""A binary batch answers a JSON summary on request (``summary=true`` or ``Accept:
application/json``): every error code counted per formula over the whole file, the first rows,
bounded; the same answer for Arrow IPC and Parquet; a key without the scope gets nothing."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest

from conftest import Server, client, make_key
from test_http import envelope_ok

ARROW = "application/vnd.apache.arrow.stream"
PARQUET = "application/vnd.apache.parquet"
FORMULAS = ["unit=price / qty", "root=SQRT(price - 150)"]


def _body(kind: str) -> bytes:
    pl = pytest.importorskip("polars")
    qty = [0 if i % 3 == 0 else i for i in range(300)]           # 100 #DIV/0!
    price = [float(i) for i in range(300)]                       # 150 #NUM!
    frame = pl.DataFrame({"price": price, "qty": qty})
    sink = io.BytesIO()
    (frame.write_ipc_stream if kind == ARROW else frame.write_parquet)(sink)
    return sink.getvalue()


@pytest.mark.parametrize("kind", [ARROW, PARQUET])
@pytest.mark.parametrize("how", ["query", "accept"])
def test_binary_batch_summary(a: httpx.Client, kind: str, how: str) -> None:
    params: dict[str, object] = {"formula": FORMULAS, "summary_rows": 5}
    headers = {"content-type": kind}
    if how == "query":
        params["summary"] = "true"
    else:
        headers["accept"] = "application/json"
    r = a.post("/v1/evaluate/batch", content=_body(kind), params=params, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json", r.text
    got = r.json()
    assert got["rows"] == 300 and r.headers["x-rows"] == "300"
    assert got["columns"] == ["unit", "unit__error", "root", "root__error"]
    # the full answer, counted here, must agree with the summary
    full = a.post("/v1/evaluate/batch", content=_body(kind), params={"formula": FORMULAS},
                  headers={"content-type": kind})
    pl = pytest.importorskip("polars")
    frame = (pl.read_ipc_stream if kind == ARROW else pl.read_parquet)(io.BytesIO(full.content))
    for name in ("unit", "root"):
        codes = [c for c in frame[f"{name}__error"].to_list() if c is not None]
        assert got["errors"][name] == {c: codes.count(c) for c in set(codes)}
    assert got["errors"] == {"unit": {"#DIV/0!": 100}, "root": {"#NUM!": 150}}
    assert len(got["first_rows"]) == 5
    assert got["first_rows"][0]["unit__error"] == "#DIV/0!"
    assert got["first_rows"][2] == {"unit": 1.0, "unit__error": None, "root": None,
                                    "root__error": "#NUM!"}


def test_summary_is_bounded_and_scoped(server: Server, a: httpx.Client, data_dir: Path) -> None:
    params = {"formula": FORMULAS, "summary": "true", "summary_rows": 101}
    envelope_ok(a.post("/v1/evaluate/batch", content=_body(ARROW), params=params,
                       headers={"content-type": ARROW}), "E706", 422)
    with client(server, make_key(data_dir, "globex", "tools:read")) as other:
        envelope_ok(other.post("/v1/evaluate/batch", content=_body(ARROW),
                               params={**params, "summary_rows": 5},
                               headers={"content-type": ARROW}), "E702", 403)
