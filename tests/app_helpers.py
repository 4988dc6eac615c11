"""Helpers for the AppTest-based tests: start the app on a page, walk its widgets."""

import json
import time
from pathlib import Path

import pandas as pd
import pytest
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Widget

from course.common import pages_index

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"


def open_page(page_path=None, lang="en", timeout=120):
    """AppTest of app.py in `lang`, switched to `page_path` (None: the first page), run.

    The root URL switches to the first page; the browser then reruns that page at
    its own URL, so the helper does the same (a widget changed in the very run
    after st.switch_page would otherwise lose its value under AppTest). Fails on an exception.
    """
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.session_state["app_lang"] = lang
    at.run()
    at.switch_page(page_path or pages_index.existing()[0].path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def utc_plus_8(monkeypatch):
    """The process's local time zone is 8 hours east of UTC for one test (POSIX TZ text: no tzdata needed)."""
    monkeypatch.setenv("TZ", "CST-8")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def widgets(node):
    """Every widget in an AppTest element tree (main area and sidebar)."""
    found = []
    if isinstance(node, Widget):
        found.append(node)
    for child in getattr(node, "children", {}).values():
        found.extend(widgets(child))
    return found


def errors_of(at):
    """Exceptions and error boxes on the current page, as text."""
    return [e.value for e in at.exception] + [e.value for e in at.error]


def metric(at, label):
    """The value shown by the metric with this label."""
    values = [m.value for m in at.metric if m.label == label]
    assert values, f"no metric {label!r}; metrics: {[m.label for m in at.metric]}"
    return values[0]


def markdown_text(at):
    """All Markdown on the page joined, to search for shown text."""
    return "\n".join(m.value for m in at.markdown)


def everything_shown(at):
    """All text of the page's elements (Markdown sources, texts, alerts, code) in both areas, joined."""
    parts = [markdown_text(at)] + [e.value for e in at.text] + [e.value for e in at.error] + \
        [e.value for e in at.warning] + [e.value for e in at.info] + [e.value for e in at.exception]
    return "\n".join(map(str, parts))


def charts(at):
    """{chart title: (spec dict, [data frames])} of the page's Vega-Lite charts (title None when it has none).

    The frames are the chart's datasets sent beside the spec, its main data, and data inlined in the spec by Altair.
    """
    found = {}
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        title = spec.get("title")
        title = title.get("text") if isinstance(title, dict) else title
        frames = [dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets]
        if chart.proto.HasField("data"):
            frames.append(dataframe_util.convert_arrow_bytes_to_pandas_df(chart.proto.data.data))
        frames += [pd.DataFrame(rows) for rows in spec.get("datasets", {}).values()]
        found[title] = (spec, frames)
    return found


__all__ = ["AppTest", "Block", "open_page", "utc_plus_8", "widgets", "errors_of", "metric", "markdown_text", "charts"]


def _chart_alternatives(at, kind):
    """ids of the `kind` elements ("table" or "dataframe") inside the expanders that hold a chart's numbers
    (course/app/chart_view.py titles each with `charts.table`)."""
    from course.common.i18n import LANGS, t

    prefixes = tuple(t("charts.table", lang, title="") for lang in LANGS)
    return {id(element.proto) for expander in at.expander if expander.label.startswith(prefixes)
            for element in getattr(expander, kind)}


def page_tables(at):
    """The page's own st.table elements, in order, without the tables the charts carry as their text alternative."""
    alternatives = _chart_alternatives(at, "table")
    return [table for table in at.table if id(table.proto) not in alternatives]


def page_dataframes(at):
    """The page's own st.dataframe elements, in order, without the charts' number grids."""
    alternatives = _chart_alternatives(at, "dataframe")
    return [frame for frame in at.dataframe if id(frame.proto) not in alternatives]
