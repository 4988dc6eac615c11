"""lti: platforms, tool keys, launch states, courses, members, line items, score outbox

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04
"""

from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('lti_platforms',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('issuer', sa.String(length=255), nullable=False),
    sa.Column('client_id', sa.String(length=255), nullable=False),
    sa.Column('auth_login_url', sa.Text(), nullable=False),
    sa.Column('auth_token_url', sa.Text(), nullable=False),
    sa.Column('key_set_url', sa.Text(), nullable=False),
    sa.Column('auth_audience', sa.Text(), nullable=True),
    sa.Column('deployment_ids', sa.JSON(), nullable=False),
    sa.Column('auto_add_learners', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('issuer', 'client_id', name='uq_lti_platforms_issuer_client')
    )
    op.create_table('lti_tool_keys',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kid', sa.String(length=64), nullable=False),
    sa.Column('private_pem', sa.Text(), nullable=False),
    sa.Column('public_jwk', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('kid')
    )
    op.create_table('lti_contexts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('platform_id', sa.Integer(), nullable=False),
    sa.Column('context_id', sa.String(length=255), nullable=False),
    sa.Column('title', sa.String(length=255), nullable=False),
    sa.Column('deployment_id', sa.String(length=255), nullable=False),
    sa.Column('lineitems_url', sa.Text(), nullable=True),
    sa.Column('ags_scopes', sa.JSON(), nullable=False),
    sa.Column('memberships_url', sa.Text(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['platform_id'], ['lti_platforms.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('platform_id', 'context_id', name='uq_lti_contexts_platform_context')
    )
    with op.batch_alter_table('lti_contexts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_lti_contexts_platform_id'), ['platform_id'], unique=False)

    op.create_table('lti_launch_states',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('state_hash', sa.String(length=64), nullable=False),
    sa.Column('nonce', sa.String(length=128), nullable=False),
    sa.Column('platform_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.Column('used_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['platform_id'], ['lti_platforms.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('nonce'),
    sa.UniqueConstraint('state_hash')
    )
    with op.batch_alter_table('lti_launch_states', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_lti_launch_states_expires_at'), ['expires_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_lti_launch_states_platform_id'), ['platform_id'], unique=False)

    op.create_table('lti_line_items',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('context_pk', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=16), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['context_pk'], ['lti_contexts.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('context_pk', 'exercise_id', name='uq_lti_line_items_context_exercise')
    )
    op.create_table('lti_members',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('context_pk', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('sub', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['context_pk'], ['lti_contexts.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('context_pk', 'sub', name='uq_lti_members_context_sub'),
    sa.UniqueConstraint('context_pk', 'user_id', name='uq_lti_members_context_user')
    )
    with op.batch_alter_table('lti_members', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_lti_members_user_id'), ['user_id'], unique=False)

    op.create_table('lti_scores',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('context_pk', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=16), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('pushed_version', sa.Integer(), nullable=False),
    sa.Column('due', sa.Boolean(), nullable=False),
    sa.Column('next_try_at', sa.DateTime(), nullable=False),
    sa.Column('tries', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=False),
    sa.Column('pushed_score', sa.Float(), nullable=True),
    sa.Column('pushed_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['context_pk'], ['lti_contexts.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('context_pk', 'user_id', 'exercise_id', name='uq_lti_scores_member_exercise')
    )
    with op.batch_alter_table('lti_scores', schema=None) as batch_op:
        batch_op.create_index('ix_lti_scores_due_next_try', ['due', 'next_try_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_lti_scores_user_id'), ['user_id'], unique=False)



def downgrade():
    with op.batch_alter_table('lti_scores', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_lti_scores_user_id'))
        batch_op.drop_index('ix_lti_scores_due_next_try')

    op.drop_table('lti_scores')
    with op.batch_alter_table('lti_members', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_lti_members_user_id'))

    op.drop_table('lti_members')
    op.drop_table('lti_line_items')
    with op.batch_alter_table('lti_launch_states', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_lti_launch_states_platform_id'))
        batch_op.drop_index(batch_op.f('ix_lti_launch_states_expires_at'))

    op.drop_table('lti_launch_states')
    with op.batch_alter_table('lti_contexts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_lti_contexts_platform_id'))

    op.drop_table('lti_contexts')
    op.drop_table('lti_tool_keys')
    op.drop_table('lti_platforms')
