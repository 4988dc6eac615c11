"""Every numeric widget of every page, moved to its minimum and to its maximum in AppTest, raises no exception.

Sliders, number inputs and select sliders: each in turn is set to its lowest and its highest value
(a range to both ends at once), the page rerun and checked for exceptions (an st.error box is the page's own
message about a setting it refuses, not a crash), then the
widget is put back, so each extreme is tried with the other widgets at their defaults. A number
input without a bound on one side is not moved to that side (there is no extreme to try). Widgets
that only appear after another one moved are found on the rerun and tried too.
"""

import pytest
from app_helpers import open_page, widgets
from streamlit.runtime.state.common import TESTING_KEY
from streamlit.testing.v1.element_tree import NumberInput, SelectSlider, Slider

from course.common import pages_index

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("lab_home"), pytest.mark.timeout(900)]  # every page, many reruns
NUMERIC = (Slider, NumberInput, SelectSlider)


def numeric_widgets(at):
    """{key: widget} of the enabled numeric widgets now on the page."""
    return {w.key: w for w in widgets(at._tree) if isinstance(w, NUMERIC) and w.key and not w.proto.disabled}


def extremes(widget):
    """[(name, value)] of the values to try: the lowest and the highest (a range: both ends at one end)."""
    if isinstance(widget, SelectSlider):
        low, high = widget.options[0], widget.options[-1]  # formatted labels: set_label sends them as they are
    else:
        low, high = widget.min, widget.max
    is_range = isinstance(widget.value, (list, tuple))
    tried = [("min", low), ("max", high)]
    return [(name, [value, value] if is_range else value) for name, value in tried if value is not None]


def set_label(at, widget, value):
    """Set a widget to `value`; for a select slider `value` is the option's shown label."""
    if isinstance(widget, SelectSlider):
        at.session_state[TESTING_KEY][widget.id] = lambda label: label  # the labels are what is sent back
    widget.set_value(value)


def shown_value(widget):
    """The widget's value in the form set_label takes (a select slider: its shown label)."""
    if isinstance(widget, SelectSlider):
        fmt = widget.format_func
        return [fmt(v) for v in widget.value] if isinstance(widget.value, (list, tuple)) else fmt(widget.value)
    return widget.value


def sweep(page_path):
    """Move each numeric widget of the page to its extremes; -> (problems, (key, name) pairs tried)."""
    at = open_page(page_path, lang="en")
    problems, tried, done = [], [], set()
    while True:
        todo = [key for key in numeric_widgets(at) if key not in done]
        if not todo:
            return problems, tried
        key = todo[0]
        done.add(key)
        original = shown_value(numeric_widgets(at)[key])
        for name, value in extremes(numeric_widgets(at)[key]):
            widget = numeric_widgets(at).get(key)
            if widget is None:  # hidden by the previous extreme
                break
            set_label(at, widget, value)
            at.run()
            errors = [e.value for e in at.exception]  # an st.error box is a deliberate message about the setting
            tried.append((key, name))
            if errors:
                problems.append(f"{key} at its {name} ({value!r}): {[str(e)[:400] for e in errors]}")
        widget = numeric_widgets(at).get(key)
        if widget is not None:
            set_label(at, widget, original)
            at.run()


@pytest.mark.parametrize("page", pages_index.existing(), ids=lambda p: p.key)
def test_every_numeric_widget_at_its_minimum_and_maximum_runs_without_errors(page):
    problems, tried = sweep(page.path)
    assert problems == [], "\n".join(problems)
    assert len(tried) == len(set(tried))


def test_the_sweep_reaches_the_positional_encoding_width_minimum():
    """The sweep moves chapter 6's num_hiddens to 4, the setting that once crashed period_table."""
    _, tried = sweep("app_pages/ch06_self_attention.py")
    assert ("ch06_hiddens", "min") in tried and ("ch06_hiddens", "max") in tried
