"""set-aside jobs: a submission whose first run passed its exercise's normal time runs again with the whole limit

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05
"""

import sqlalchemy as sa
from alembic import op


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.add_column(sa.Column('full_time', sa.Boolean(), server_default='0', nullable=False))


def downgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.drop_column('full_time')
