"""Class mode: an instructor hosts the course; learners sign in and submit; workers grade.

Four wings and the LMS side, each a package whose __init__ says what it holds and may import; they import one
way, down this order (.importlinter's `class-wings`; `|`: never import one another):

    cli  >  app_pages  >  web  >  analytics | line | lti  >  data

classroom/data/ is the class database and its rules (tables, migrations' runner, the store's operations, which
verdict counts, extensions and overrides, the LMS outbox rows a stored score makes due); classroom/line/ the
grading queue, the waiting line and its forecast, and the workers; classroom/web/ the app's side (roles,
sign-in, page sections, the class's Learner that app.py builds; pages reach it through course.app.learner);
classroom/analytics/ the gradebook and copy detection; classroom/lti/ the LMS side (LTI 1.3). The class's own
pages are in classroom/app_pages/ (Practice, Gradebook, Analytics; nothing imports them); the command line
`python -m classroom` is classroom/cli.py. Imported by app.py and class_app.py only, never by course/ or
app_pages/; may import course/ and grader/. The worker side (data, line, cli) never loads course.app or
Streamlit, not even through another module (.importlinter's `class-worker`; data/address.py's one Streamlit
import, inside the function that reads the app's secrets, is the app side's); the web side reads verdicts
through web/feedback.py, never line/grading.py (`class-web`).
"""
