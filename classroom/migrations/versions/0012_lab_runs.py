"""lab_runs: the training lab's live runs on the app server, for the class-wide cap

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07
"""

from alembic import op
import sqlalchemy as sa


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('lab_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('ends_by', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_lab_runs_user_id'), 'lab_runs', ['user_id'], unique=False)
    op.create_index('ix_lab_runs_finished_ends', 'lab_runs', ['finished_at', 'ends_by'], unique=False)


def downgrade():
    op.drop_index('ix_lab_runs_finished_ends', table_name='lab_runs')
    op.drop_index(op.f('ix_lab_runs_user_id'), table_name='lab_runs')
    op.drop_table('lab_runs')
