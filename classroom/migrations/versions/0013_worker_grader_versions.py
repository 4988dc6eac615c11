"""worker grader versions: the grader each worker runs, held against the version the class expects

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('workers') as batch_op:
        batch_op.add_column(sa.Column('grader_version', sa.String(length=64), nullable=False, server_default=''))


def downgrade():
    with op.batch_alter_table('workers') as batch_op:
        batch_op.drop_column('grader_version')
