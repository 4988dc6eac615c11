"""sandbox failures: how many times a job's sandbox failed under it (it is graded again, up to queue.SANDBOX_TRIES)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.add_column(sa.Column('sandbox_failures', sa.Integer(), nullable=False, server_default='0'))


def downgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.drop_column('sandbox_failures')
