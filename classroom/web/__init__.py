"""Class mode's web wing: what the app's side needs of a class.

Roles and what each may do (access.py: also the command line's staff operations), sign-in and page
access (web.py, signin.py, session_cookie.py), page sections (views.py, similarity_view.py), verdicts in
words (feedback.py), the learner's records (learner_records.py) and the class's Learner that app.py builds
(learner.py). The class's own pages are in classroom/app_pages/.

May import: classroom.analytics, classroom.line (the queue's state, never its grading: .importlinter
`class-web`) and classroom.data, Streamlit, course/ and grader/ (.importlinter `class-wings`). Nothing of
classroom/ imports it but the command line (access.py) and classroom/app_pages/.
"""
