"""The service's first tables: API keys, stored formulas, versions, aliases, events.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "formulane_api_keys",
        sa.Column("key_id", sa.String(32), primary_key=True),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("tenant", sa.String(256), nullable=False),
        sa.Column("subject", sa.String(256), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("scopes", sa.Text, nullable=False),
        sa.Column("label", sa.String(200), nullable=False, server_default=""),
        sa.Column("parent_key_id", sa.String(32)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float),
        sa.Column("revoked_at", sa.Float),
    )
    op.create_index("ix_formulane_api_keys_tenant", "formulane_api_keys", ["tenant"])
    op.create_table(
        "formulane_api_formulas",
        sa.Column("formula_id", sa.String(40), primary_key=True),
        sa.Column("tenant", sa.String(256), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("created_by", sa.String(256), nullable=False),
        sa.Column("deleted_at", sa.Float),
        sa.Column("deleted_by", sa.String(256)),
        sa.UniqueConstraint("tenant", "name", name="uq_formulane_api_formulas_tenant_name"),
    )
    op.create_table(
        "formulane_api_formula_versions",
        sa.Column("formula_id", sa.String(40), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("schema_json", sa.Text, nullable=False),
        sa.Column("profile", sa.String(16), nullable=False),
        sa.Column("cases_json", sa.Text, nullable=False),
        sa.Column("program_json", sa.Text, nullable=False),
        sa.Column("language_version", sa.String(16), nullable=False),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("created_by", sa.String(256), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("published_at", sa.Float),
        sa.Column("published_by", sa.String(256)),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
    )
    op.create_table(
        "formulane_api_formula_aliases",
        sa.Column("formula_id", sa.String(40), primary_key=True),
        sa.Column("alias", sa.String(40), primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("updated_by", sa.String(256), nullable=False),
    )
    op.create_table(
        "formulane_api_formula_events",
        sa.Column("event_id", sa.String(40), primary_key=True),
        sa.Column("formula_id", sa.String(40), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("actor", sa.String(256), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("version", sa.Integer),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("request_id", sa.String(64), nullable=False, server_default=""),
    )
    op.create_index("ix_formulane_api_formula_events_formula", "formulane_api_formula_events",
                    ["formula_id", "at"])


def downgrade() -> None:
    for name in ("formulane_api_formula_events", "formulane_api_formula_aliases",
                 "formulane_api_formula_versions", "formulane_api_formulas",
                 "formulane_api_keys"):
        op.drop_table(name)
