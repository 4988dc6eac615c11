"""exercise variants: submissions.variant and the learners' variant assignments

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('submissions') as batch_op:
        batch_op.add_column(sa.Column('variant', sa.Integer(), nullable=False, server_default='0'))
    op.create_table('variant_assignments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=16), nullable=False),
    sa.Column('variant', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('user_id', 'exercise_id', name='uq_variant_assignments_user_exercise')
    )
    with op.batch_alter_table('variant_assignments') as batch_op:
        batch_op.create_index(batch_op.f('ix_variant_assignments_user_id'), ['user_id'], unique=False)


def downgrade():
    with op.batch_alter_table('variant_assignments') as batch_op:
        batch_op.drop_index(batch_op.f('ix_variant_assignments_user_id'))
    op.drop_table('variant_assignments')
    with op.batch_alter_table('submissions') as batch_op:
        batch_op.drop_column('variant')
