"""regrade indexes: the oldest queued regrade and the newest claimed one, read by every claim

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05
"""

from alembic import op


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.create_index('ix_jobs_reason_state_created', ['reason', 'state', 'created_at'], unique=False)
        batch_op.create_index('ix_jobs_reason_started', ['reason', 'started_at'], unique=False)


def downgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.drop_index('ix_jobs_reason_started')
        batch_op.drop_index('ix_jobs_reason_state_created')
