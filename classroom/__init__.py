"""Class mode: an instructor hosts the course; learners sign in and submit; workers grade.

Store (SQLAlchemy 2 + Alembic) in classroom/models.py and classroom/db.py, the
job queue with leases in classroom/queue.py, the grading worker in
classroom/worker.py, roles in classroom/access.py, gradebook and analytics in
classroom/analytics.py, and the command line `python -m classroom` in
classroom/cli.py. The app's side (Streamlit; imported by app.py and app_pages/ only): sign-in
and page access in classroom/web.py, page sections in classroom/views.py.
"""
