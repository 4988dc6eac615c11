"""submissions.lang: the language the learner's feedback is written in

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('submissions') as batch_op:
        batch_op.add_column(sa.Column('lang', sa.String(length=8), nullable=False, server_default='en'))


def downgrade():
    with op.batch_alter_table('submissions') as batch_op:
        batch_op.drop_column('lang')
