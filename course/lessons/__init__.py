"""The chapters' experiments: the maths and charts behind each chapter page (chNN.py, or a package chNN/).

Pure functions of plain values, no Streamlit, so each is unit-tested on its own
and the page caches its results. Every attention number comes from the reference
modules in solutions/, never from the learner's exercises/. May import
course.common, course.model and solutions; never course.app, course.translation or app_pages/.
A new chapter's logic goes in a new chNN.py here, or in a package chNN/ (the
chapter's maths in its __init__.py, the other parts beside it) when it has several.
Chart builders return Vega-Lite dicts (chart.to_dict()), the form the pages draw.
"""
