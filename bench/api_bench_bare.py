"""The bare FastAPI endpoint `api_bench.py` compares against: one route returning a constant,
served by the same uvicorn settings as `formulane serve` (one process, no access log)."""

from __future__ import annotations

import sys

import uvicorn
from fastapi import FastAPI

app = FastAPI()


@app.get("/constant")
async def constant() -> dict[str, int]:
    return {"value": 42}


@app.post("/constant")
async def constant_post() -> dict[str, int]:
    return {"value": 42}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=False, log_level="warning")
