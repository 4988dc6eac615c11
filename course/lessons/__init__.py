"""The chapters' experiments: the maths and charts behind each chapter page (chNN.py).

Pure functions of plain values, no Streamlit, so each is unit-tested on its own
and the page caches its results. Every attention number comes from the reference
modules in solutions/, never from the learner's exercises/. May import
course.common and solutions; never course.app, course.translation or app_pages/.
A new chapter's logic goes in a new chNN.py here.
"""
