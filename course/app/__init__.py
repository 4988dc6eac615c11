"""The Streamlit app's support code: everything app_pages/ need besides the lessons and demos.

ui (language switch, text lookup, status labels, chapter footers), pages_index
(the ordered page list app.py routes from; a new page gets an entry here),
progress and notes (the learner's saved results and notes), grading_client and
demo_runner (run the grader and the learner's translator in child processes;
learner code never runs in the app's process) and demo_ui (the demo pages' shared
widgets). The only package here that imports Streamlit. May import every other
course package; nothing but app_pages/ and app.py imports it (the grader may use progress).
"""
