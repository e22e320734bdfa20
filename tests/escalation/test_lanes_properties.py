"""Properties of the lane receipts' helpers: redaction never lets a credential through, values
are always JSON, receipts keep their hash through the store."""

from __future__ import annotations

import json
import string
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from formulane.escalation.lanes import (
    DecisionRecord, LaneReceipt, RequestRecord, json_value, redact_code,
)
from formulane.escalation.store import open_store

_ALNUM = string.ascii_letters + string.digits
TOKENS = st.one_of(
    st.text(_ALNUM + "_-", min_size=20, max_size=40).map(lambda t: "sk-" + t),
    st.text(_ALNUM, min_size=24, max_size=40).map(lambda t: "ghp_" + t),
    st.text(string.ascii_uppercase + string.digits, min_size=16, max_size=16)
    .map(lambda t: "AKIA" + t),
)
SEPARATORS = st.sampled_from([" ", "'", '"', "=", "(", "\n", ", "])
KEYS = st.sampled_from(["api_key", "API_KEY", "password", "db_password", "token", "secret",
                        "client_secret", "auth_token", "private_key", "credentials"])
VALUES = st.text(string.printable.replace("'", "").replace('"', "").replace("\n", "")
                 .replace("\r", "").replace("\x0b", "").replace("\x0c", ""),
                 min_size=1, max_size=60)


@given(st.text(max_size=40), SEPARATORS, TOKENS, SEPARATORS, st.text(max_size=40))
def test_known_token_shapes_never_survive(before: str, sep: str, token: str, sep2: str,
                                          after: str) -> None:
    assert token not in redact_code(before + sep + token + sep2 + after)


@given(KEYS, VALUES, st.sampled_from(["'", '"']), st.sampled_from([" = ", "=", ": "]))
def test_credential_assignments_are_redacted(key: str, value: str, quote: str,
                                             op: str) -> None:
    assert redact_code(f"{key}{op}{quote}{value}{quote}") == \
        f"{key}{op}{quote}[redacted]{quote}"


@given(st.text(alphabet=_ALNUM, min_size=1, max_size=12),
       st.text(alphabet=_ALNUM, min_size=1, max_size=12))
def test_url_passwords_are_redacted(user: str, password: str) -> None:
    out = redact_code(f"dsn = connect('postgresql://{user}:{password}@db.internal/app')")
    assert f":{password}@" not in out and "[redacted]@db.internal" in out


JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10),
              st.floats(allow_nan=False, allow_infinity=False),
              st.decimals(allow_nan=False, allow_infinity=False, places=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=12)


@given(JSONISH)
def test_values_are_json_and_exact(value: object) -> None:
    out = json_value(value)
    assert json.loads(json.dumps(out)) == out
    assert json_value(out) == out
    if isinstance(value, Decimal):
        assert Decimal(str(out)) == value


@settings(max_examples=30)
@given(st.sampled_from(["formula", "tool", "sandbox", "refuse", "postpone"]),
       st.sampled_from(["succeeded", "user_error", "refused", "postponed", "unknown"]),
       st.text(min_size=1, max_size=30), st.one_of(st.none(), st.text(max_size=80)))
def test_receipts_keep_their_hash_through_the_store(lane: str, outcome: str, ask: str,
                                                    code: str | None) -> None:
    receipt = LaneReceipt(request_id="r1", lane=lane, tenant="t", principal="p",  # type: ignore
                          request=RequestRecord(ask=ask, code=code),
                          decision=DecisionRecord(lane=lane, reasons=()),  # type: ignore
                          runtime="x", outcome=outcome)
    store = open_store(":memory:")
    try:
        store.append_lane(receipt)
        store.append_lane(receipt.model_copy(update={"receipt_id": "second"}))
        back = store.lane_receipt(receipt.receipt_id)
        assert back is not None and back.sha256 == receipt.sha256
        assert store.verify_lane_chain()
    finally:
        store.close()


def test_a_tampered_lane_receipt_breaks_the_chain(tmp_path: object) -> None:
    store = open_store(":memory:")
    try:
        for i in range(3):
            store.append_lane(LaneReceipt(
                request_id=f"r{i}", lane="formula", tenant="t", principal="p",
                request=RequestRecord(ask="a"), decision=DecisionRecord(lane="formula",
                                                                        reasons=()),
                runtime="x", outcome="succeeded"))
        assert store.verify_lane_chain()
        store.execute(text("DROP TRIGGER lane_receipts_no_update"))  # what an intruder would do
        store.execute(text("UPDATE lane_receipts SET receipt_json = replace(receipt_json, "
                           "'succeeded', 'user_error') WHERE seq = 2"))
        assert not store.verify_lane_chain()
    finally:
        store.close()
