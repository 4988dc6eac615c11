"""What the chapters' experiments and the translators both build on: torch code shared by course.lessons and
course.translation, which never import each other.

train_loop (the one training loop: every model the course trains steps through it). May import torch,
course.common and solutions; never course.app, course.lessons, course.translation or app_pages/ (.importlinter's
`course` contract), and never Streamlit (`course-streamlit`).
"""
