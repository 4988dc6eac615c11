"""Class mode: an instructor hosts the course; learners sign in and submit; workers grade.

Store (SQLAlchemy 2 + Alembic) in classroom/models.py and classroom/db.py, the
job queue with leases in classroom/queue.py, the grading worker in
classroom/worker.py (one job through the grader: classroom/grading.py; the
stored verdict's fields: classroom/verdicts.py; which verdict counts:
classroom/which_counts.py), roles in classroom/access.py, gradebook and analytics in
classroom/analytics.py, and the command line `python -m classroom` in
classroom/cli.py. The app's side (Streamlit; imported by app.py only, never by course/ or
app_pages/): the class's Learner in classroom/learner.py (app.py builds it; pages reach it
through course.app.learner), sign-in and page access in classroom/web.py, page sections in
classroom/views.py, verdicts in words in classroom/feedback.py, and the class's own pages in
classroom/app_pages/ (Practice, Gradebook, Analytics; nothing imports them). May import course/
and grader/. The worker side (store, queue, worker, grading, cli, db) never loads course.app or Streamlit,
not even through another module (.importlinter's `class-worker`; address.py's one Streamlit import, inside
the function that reads the app's secrets, is the app side's); the web side reads verdicts through
feedback.py, never grading.py (`class-web`).
"""
