"""The Streamlit app's support code: everything app_pages/ need besides the lessons and demos.

ui (language switch, text lookup, status labels, chapter footers), learner (the
Learner interface, its self-study implementation and current(): what
pages ask instead of knowing the mode), progress and notes (the self-study
learner's recorded results, ranked by course.common.ranking, and notes), grading_client and
demo_runner (run the grader and the learner's translator in child processes;
learner code never runs in the app's process) and demo_ui (the demo pages' shared
widgets). The only package here that imports Streamlit. May import every other
course package, never classroom/ or grader/; imported by app.py, app_pages/ and
classroom's app side; never by the grader (it only reports).
"""
