-- The job store's schema exactly as the hand-written SQL of formulane 4295442 created it
-- (escalation/store.py: _TABLES, _SQLITE_TRIGGERS, _PG_TRIGGERS), so that
-- tests/escalation/test_store_compat.py can write a database the old way and open it with
-- the SQLAlchemy store. {serial}: INTEGER PRIMARY KEY AUTOINCREMENT on SQLite, BIGSERIAL
-- PRIMARY KEY on PostgreSQL. A line '-- @name' starts a section; a line '/' ends a statement
-- (trigger bodies contain ';').
-- @tables
CREATE TABLE IF NOT EXISTS escalation_jobs (
    job_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    job_json TEXT NOT NULL,
    backend TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    owner TEXT,
    lease_until DOUBLE PRECISION,
    provider_ids TEXT NOT NULL,
    side_effects_possible INTEGER NOT NULL,
    cancel_requested TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (tenant, idempotency_key)
)
/
CREATE TABLE IF NOT EXISTS escalation_receipts (
    seq {serial},
    job_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    receipt_json TEXT NOT NULL,
    receipt_sha256 TEXT NOT NULL,
    prev_chain TEXT NOT NULL,
    chain_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL
)
/
CREATE INDEX IF NOT EXISTS escalation_receipts_job ON escalation_receipts (job_id)
/
CREATE TABLE IF NOT EXISTS escalation_artifacts (
    job_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    stored_ref TEXT,
    complete INTEGER,
    mime TEXT NOT NULL,
    created_at TEXT NOT NULL
)
/
CREATE TABLE IF NOT EXISTS lane_receipts (
    seq {serial},
    receipt_id TEXT NOT NULL UNIQUE,
    request_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    lane TEXT NOT NULL,
    job_kind TEXT NOT NULL,
    outcome TEXT NOT NULL,
    job_id TEXT,
    created_at TEXT NOT NULL,
    receipt_json TEXT NOT NULL,
    receipt_sha256 TEXT NOT NULL,
    prev_chain TEXT NOT NULL,
    chain_sha256 TEXT NOT NULL
)
/
CREATE INDEX IF NOT EXISTS lane_receipts_created ON lane_receipts (created_at)
/
CREATE INDEX IF NOT EXISTS lane_receipts_request ON lane_receipts (request_id)
/
CREATE TABLE IF NOT EXISTS lane_reviews (
    seq {serial},
    receipt_id TEXT NOT NULL,
    state TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    note TEXT NOT NULL,
    created_at TEXT NOT NULL
)
/
CREATE INDEX IF NOT EXISTS lane_reviews_receipt ON lane_reviews (receipt_id)
/
CREATE TABLE IF NOT EXISTS lane_pending (
    job_id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    decision_json TEXT NOT NULL,
    review TEXT NOT NULL,
    created_at TEXT NOT NULL
)
/
CREATE TABLE IF NOT EXISTS lane_drafts (
    draft_id TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    version INTEGER,
    status TEXT NOT NULL,
    source_job_id TEXT,
    tenant TEXT NOT NULL,
    code TEXT NOT NULL,
    code_sha256 TEXT NOT NULL,
    runtime_json TEXT NOT NULL,
    environment_digest TEXT,
    arguments_json TEXT NOT NULL,
    effect TEXT NOT NULL,
    scopes_json TEXT NOT NULL,
    created_by TEXT NOT NULL,
    approved_by TEXT,
    created_at TEXT NOT NULL
)
/
CREATE TABLE IF NOT EXISTS lane_draft_cases (
    seq {serial},
    case_id TEXT NOT NULL UNIQUE,
    tool TEXT NOT NULL,
    inputs_json TEXT NOT NULL,
    expected_json TEXT NOT NULL,
    added_by TEXT NOT NULL,
    note TEXT NOT NULL,
    created_at TEXT NOT NULL
)
/
-- @sqlite_triggers
CREATE TRIGGER IF NOT EXISTS escalation_receipts_no_update BEFORE UPDATE ON escalation_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END
/
CREATE TRIGGER IF NOT EXISTS escalation_receipts_no_delete BEFORE DELETE ON escalation_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END
/
CREATE TRIGGER IF NOT EXISTS lane_receipts_no_update BEFORE UPDATE ON lane_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END
/
CREATE TRIGGER IF NOT EXISTS lane_receipts_no_delete BEFORE DELETE ON lane_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END
/
CREATE TRIGGER IF NOT EXISTS lane_reviews_no_update BEFORE UPDATE ON lane_reviews
BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END
/
CREATE TRIGGER IF NOT EXISTS lane_reviews_no_delete BEFORE DELETE ON lane_reviews
BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END
/
-- @postgres_triggers
CREATE OR REPLACE FUNCTION escalation_append_only() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'receipts are append-only'; END $$ LANGUAGE plpgsql
/
DROP TRIGGER IF EXISTS escalation_receipts_append_only ON escalation_receipts
/
CREATE TRIGGER escalation_receipts_append_only BEFORE UPDATE OR DELETE ON escalation_receipts FOR EACH ROW EXECUTE FUNCTION escalation_append_only()
/
DROP TRIGGER IF EXISTS lane_receipts_append_only ON lane_receipts
/
CREATE TRIGGER lane_receipts_append_only BEFORE UPDATE OR DELETE ON lane_receipts FOR EACH ROW EXECUTE FUNCTION escalation_append_only()
/
DROP TRIGGER IF EXISTS lane_reviews_append_only ON lane_reviews
/
CREATE TRIGGER lane_reviews_append_only BEFORE UPDATE OR DELETE ON lane_reviews FOR EACH ROW EXECUTE FUNCTION escalation_append_only()
/
