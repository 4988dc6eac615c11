"""job turns: a job's place in its learner's round-robin turn, fixed when it is queued (classroom/line/queue.py claim_order)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.add_column(sa.Column('turn', sa.Integer(), nullable=False, server_default='1'))
        batch_op.create_index('ix_jobs_reason_state_turn', ['reason', 'state', 'turn', 'id'], unique=False)
    # The unfinished jobs take the turns the claim order gave them so far: their place among their learner's
    # unfinished jobs of the same batch (submissions, regrades, submissions set aside), oldest first.
    bind = op.get_bind()
    rows = bind.execute(sa.text(
        "SELECT jobs.id, submissions.user_id, jobs.reason, jobs.full_time FROM jobs "
        "JOIN submissions ON submissions.id = jobs.submission_id "
        "WHERE jobs.state IN ('queued', 'running') ORDER BY jobs.id")).all()
    counts, turns = {}, []
    for job_id, user_id, reason, full_time in rows:
        key = (user_id, 1 if reason == 'regrade' else 2 if full_time else 0)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] > 1:
            turns.append({'id': job_id, 'turn': counts[key]})
    if turns:
        bind.execute(sa.text("UPDATE jobs SET turn = :turn WHERE id = :id"), turns)


def downgrade():
    with op.batch_alter_table('jobs') as batch_op:
        batch_op.drop_index('ix_jobs_reason_state_turn')
        batch_op.drop_column('turn')
