"""users.removed_at, sign_in_tokens.revoked_at, workers.lease_s: removing people, revoking links, telling dead workers

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users') as batch_op:
        batch_op.add_column(sa.Column('removed_at', sa.DateTime(), nullable=True))
    with op.batch_alter_table('sign_in_tokens') as batch_op:
        batch_op.add_column(sa.Column('revoked_at', sa.DateTime(), nullable=True))
    with op.batch_alter_table('workers') as batch_op:
        batch_op.add_column(sa.Column('lease_s', sa.Float(), nullable=False, server_default='60'))


def downgrade():
    with op.batch_alter_table('workers') as batch_op:
        batch_op.drop_column('lease_s')
    with op.batch_alter_table('sign_in_tokens') as batch_op:
        batch_op.drop_column('revoked_at')
    with op.batch_alter_table('users') as batch_op:
        batch_op.drop_column('removed_at')
