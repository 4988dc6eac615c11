"""extensions and score overrides: one learner's later deadline or staff-set score for one exercise, and their
audit log

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-08
"""

import sqlalchemy as sa
from alembic import op


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('extensions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=16), nullable=False),
    sa.Column('until', sa.DateTime(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('granted_by', sa.String(length=320), nullable=False),
    sa.Column('granted_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('user_id', 'exercise_id', name='uq_extensions_user_exercise')
    )
    op.create_index(op.f('ix_extensions_user_id'), 'extensions', ['user_id'], unique=False)
    op.create_table('score_overrides',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=16), nullable=False),
    sa.Column('score', sa.Float(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('set_by', sa.String(length=320), nullable=False),
    sa.Column('set_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('user_id', 'exercise_id', name='uq_score_overrides_user_exercise')
    )
    op.create_index(op.f('ix_score_overrides_user_id'), 'score_overrides', ['user_id'], unique=False)
    op.create_table('adjustment_log',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(), nullable=False),
    sa.Column('actor', sa.String(length=320), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=16), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('before', sa.String(length=64), nullable=False),
    sa.Column('after', sa.String(length=64), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id']),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_adjustment_log_user_exercise', 'adjustment_log', ['user_id', 'exercise_id'], unique=False)


def downgrade():
    op.drop_index('ix_adjustment_log_user_exercise', table_name='adjustment_log')
    op.drop_table('adjustment_log')
    op.drop_index(op.f('ix_score_overrides_user_id'), table_name='score_overrides')
    op.drop_table('score_overrides')
    op.drop_index(op.f('ix_extensions_user_id'), table_name='extensions')
    op.drop_table('extensions')
