"""Attention Lab's shared library, in five rooms (dependencies point down this list only; lessons and
translation never import each other):

- course.app: the Streamlit app's support code (language, page index, progress, notes,
  the clients that run the grader and the learner's demo in child processes, shared widgets).
- course.lessons: the chapters' experiments and charts, one module per chapter.
- course.translation: the English-to-Chinese translators, from the Tatoeba loader to
  training, evaluation and the demo pages' logic.
- course.model: the torch code lessons and translation share (the one training loop).
- course.common: the vocabulary every part shares (exercise index and statuses, paths and
  atomic writes, text catalogs, chart helpers).

app_pages/ import from here; here nothing imports app_pages/, classroom/ or grader/ (class mode reaches
the pages through course.app.learner), and only course.app imports Streamlit.
The contracts `rooms`, `course` and `course-streamlit` in .importlinter state these directions; lint-imports
checks them.
"""
