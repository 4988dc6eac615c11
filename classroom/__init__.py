"""Class mode: an instructor hosts the course; learners sign in and submit; workers grade.

Store (SQLAlchemy 2 + Alembic) in classroom/data/models.py and classroom/data/db.py, the
job queue with leases in classroom/line/queue.py, the grading worker in
classroom/line/worker.py (one job through the grader: classroom/line/grading.py; the
stored verdict's fields: classroom/data/verdicts.py; which verdict counts:
classroom/data/which_counts.py), roles in classroom/web/access.py, gradebook and analytics in
classroom/analytics/analytics.py, and the command line `python -m classroom` in
classroom/cli.py. The app's side (Streamlit; imported by app.py only, never by course/ or
app_pages/): the class's Learner in classroom/web/learner.py (app.py builds it; pages reach it
through course.app.learner), sign-in and page access in classroom/web/web.py, page sections in
classroom/web/views.py, verdicts in words in classroom/web/feedback.py, and the class's own pages in
classroom/app_pages/ (Practice, Gradebook, Analytics; nothing imports them). May import course/
and grader/. The worker side (store, queue, worker, grading, cli, db) never loads course.app or Streamlit,
not even through another module (.importlinter's `class-worker`; address.py's one Streamlit import, inside
the function that reads the app's secrets, is the app side's); the web side reads verdicts through
feedback.py, never grading.py (`class-web`).
"""
