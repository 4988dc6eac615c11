"""set-aside stamps: which worker stopped a submission's first run, and when (the wait forecast's gaps)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.add_column(sa.Column('set_aside_by', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('set_aside_at', sa.DateTime(), nullable=True))
        batch_op.create_index('ix_jobs_set_aside_at', ['set_aside_at'], unique=False)


def downgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.drop_index('ix_jobs_set_aside_at')
        batch_op.drop_column('set_aside_at')
        batch_op.drop_column('set_aside_by')
