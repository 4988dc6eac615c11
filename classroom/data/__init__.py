"""Class mode's data wing: the class database and every rule about what it holds.

The tables (models.py), opening and migrating the database (db.py; Alembic's scripts stay in
classroom/migrations/), where the database is (address.py: the standard library only), the store's
operations (roster.py, sessions.py: sign-in links and sessions, settings.py: settings and deadlines,
submissions.py: submitting and storing a verdict, variants.py),
server-side OpenID Connect sessions (oidc_session.py), a job's turn when it is queued (turns.py), the
stored verdict's fields (verdicts.py), which verdict counts (which_counts.py), extensions and overrides
(adjustments.py), the LMS outbox rows a stored score makes due (lms_outbox.py), the lab's cap on live
runs (lab_runs.py), the class's exercise table (exercise_table.py), rules on learner-given text
(text_rules.py), who may do what and where each role lands after signing in (roles.py) and backups (backup.py).

May import: the standard library, SQLAlchemy, Alembic and pandas, course.common and grader.report (the grader's
version), and nothing else of classroom/ (.importlinter `class-wings`: the lowest wing); Streamlit only inside
address.app_secrets, for the app's side (`class-worker`).
"""
