"""``formulane serve``, ``formulane keys`` and ``formulane db``: the service's command line.

Contract: `add_parser(subparsers)` registers the three commands (each sets ``api_run``, which
`formulane.cli.main` calls). ``serve`` starts uvicorn with zero configuration: loopback only
(another address needs ``--allow-remote``), SQLite under ``--data-dir``, the migrations run, a
development key (all scopes, tenant ``dev``) created on the first start and printed once, the
sandbox backend and its limits said plainly, the playground URL printed. ``keys create``
prints the new key alone on its last line; ``keys list`` and ``keys revoke`` manage them.
``db upgrade`` runs the Alembic migrations. Flags override ``FORMULANE_*`` variables.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

COMMANDS = ("serve", "keys", "db")


def add_parser(subparsers: Any) -> None:
    serve = subparsers.add_parser("serve", help="run the HTTP service (formulas, tools, jobs)")
    _common(serve)
    serve.add_argument("--host", help="bind address (FORMULANE_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (FORMULANE_PORT, default 8421)")
    serve.add_argument("--tools", help="module:attr of a ToolRegistry (FORMULANE_TOOLS); "
                                       "default: formula tools + demo tools")
    serve.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    serve.add_argument("--allow-remote", action="store_true",
                       help="allow a non-loopback bind address (put TLS in front of it)")
    serve.add_argument("--sandbox", choices=("auto", "bubblewrap", "process", "none"))
    serve.set_defaults(api_run=run_serve)

    keys = subparsers.add_parser("keys", help="manage API keys of the HTTP service")
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    create = ksub.add_parser("create", help="create a key (printed alone on the last line)")
    _common(create)
    create.add_argument("--tenant", required=True)
    create.add_argument("--scopes", nargs="+", default=None, metavar="SCOPE",
                        help="scopes (space or comma separated; default: every service scope)")
    create.add_argument("--subject", help="who the key acts for (default: key:<id>)")
    create.add_argument("--kind", choices=("user", "workload"), default="user")
    create.add_argument("--label", default="")
    create.add_argument("--ttl", type=float, help="seconds until it expires (default: never)")
    lst = ksub.add_parser("list", help="list keys (never their secrets)")
    _common(lst)
    lst.add_argument("--tenant")
    lst.add_argument("--json", action="store_true")
    revoke = ksub.add_parser("revoke", help="revoke a key by id")
    _common(revoke)
    revoke.add_argument("key_id")
    keys.set_defaults(api_run=run_keys)

    db = subparsers.add_parser("db", help="the service's database")
    dsub = db.add_subparsers(dest="db_command", required=True)
    up = dsub.add_parser("upgrade", help="run the migrations (Alembic) up to the newest")
    _common(up)
    db.set_defaults(api_run=run_db)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="data directory (FORMULANE_DATA_DIR, default "
                                           "./.formulane)")
    parser.add_argument("--database-url", help="SQLAlchemy/PostgreSQL URL "
                                               "(FORMULANE_DATABASE_URL; default: SQLite in the "
                                               "data directory)")


def _settings(args: argparse.Namespace, **extra: Any) -> Any:
    from .settings import Settings

    overrides = {k: v for k, v in {
        "data_dir": getattr(args, "data_dir", None),
        "database_url": getattr(args, "database_url", None), **extra}.items() if v is not None}
    return Settings(**overrides)


def all_scopes(registry: Any = None) -> list[str]:
    from .auth import SCOPES

    scopes = set(SCOPES)
    if registry is not None:
        for tool in registry.tools():
            scopes.update(tool.scopes)
    return sorted(scopes)


def run_keys(args: argparse.Namespace) -> int:
    from ..errors import FormulaError
    from .auth import KeyStore
    from .db import make_engine, upgrade

    settings = _settings(args)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.resolved_database_url())
    try:
        upgrade(engine)
        store = KeyStore(engine)
        if args.keys_command == "create":
            if args.scopes is None:
                from .demo_tools import DEMO_SCOPES

                scopes = sorted({*all_scopes(), *DEMO_SCOPES})
            else:
                scopes = [s for part in args.scopes for s in part.split(",") if s.strip()]
            key, who = store.create(tenant=args.tenant, scopes=scopes, subject=args.subject,
                                    kind=args.kind, label=args.label, ttl_s=args.ttl)
            print(f"created key {who.key_id} for tenant {who.tenant} with scopes "
                  f"{', '.join(sorted(who.scopes))}", file=sys.stderr)
            print(key)
            return 0
        if args.keys_command == "list":
            rows = store.keys(args.tenant)
            if args.json:
                print(json.dumps(rows))
            else:
                for r in rows:
                    state = "revoked" if r["revoked_at"] else "active"
                    print(f"{r['key_id']}  {r['tenant']:<16} {state:<8} {r['subject']:<24} "
                          f"{','.join(r['scopes'])}")
            return 0
        if args.keys_command == "revoke":
            if store.revoke(args.key_id):
                print(f"revoked {args.key_id}")
                return 0
            print(f"formulane: no active key {args.key_id}", file=sys.stderr)
            return 1
    except FormulaError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    finally:
        engine.dispose()
    return 2


def run_db(args: argparse.Namespace) -> int:
    from .db import make_engine, upgrade

    settings = _settings(args)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.resolved_database_url())
    try:
        print(f"database at revision {upgrade(engine)}")
    finally:
        engine.dispose()
    return 0


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..errors import FormulaError
    from .app import create_app
    from .auth import KeyStore
    from .envelope import configure_logging
    from .service import Service

    settings = _settings(args, host=args.host, port=args.port, tools=args.tools,
                         allow_remote=True if args.allow_remote else None, sandbox=args.sandbox)
    if not settings.loopback() and not settings.allow_remote:
        print(f"formulane: refusing to listen on {settings.host}: the service binds to loopback "
              "only unless --allow-remote is given (and then put a TLS proxy in front of it)",
              file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    try:
        service = Service(settings)
    except FormulaError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    keys = KeyStore(service.engine)
    base = f"http://{settings.host if ':' not in settings.host else '[' + settings.host + ']'}" \
           f":{settings.port}"
    lines = [f"formulane serve: {base}  (data in {Path(settings.data_dir).resolve()})"]
    if keys.count() == 0:
        key, _ = keys.create(tenant="dev", scopes=all_scopes(service.tools), subject="dev",
                             label="development key (created on first start)")
        lines.append("development API key (shown once; tenant 'dev', every scope):")
        lines.append(f"  {key}")
    lines.append(f"playground: {base}/  ·  API docs: {base}/docs  ·  OpenAPI: {base}/openapi.json")
    if service.backend is not None:
        caps = service.backend.capabilities()
        lines.append(f"sandbox: {caps.name} ({caps.mechanism})")
    if service.backend_note:
        lines.append(f"note: {service.backend_note}")
    if service.demo_tools:
        lines.append("tools: formula tools + DEMO tools (demo_list_notes, demo_add_note needs "
                     "approval); serve your own with --tools module:attr")
    print("\n".join(lines), file=sys.stderr, flush=True)
    if args.workers > 1:
        # Worker processes build their own Service from the environment (one database).
        service.close()
        import os

        for name in ("host", "port", "data_dir", "database_url", "tools", "sandbox"):
            value = getattr(settings, name)
            if value is not None:
                os.environ[f"FORMULANE_{name.upper()}"] = str(value)
        uvicorn.run("formulane.api.app:create_app", factory=True, host=settings.host,
                    port=settings.port, workers=args.workers, access_log=False, log_config=None)
        return 0
    app = create_app(service=service)
    try:
        uvicorn.run(app, host=settings.host, port=settings.port, access_log=False,
                    log_config=None)
    finally:
        service.close()
    return 0
