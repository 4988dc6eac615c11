"""Long names and wide tables are shown whole: legends without a length limit, tables that wrap, full-width
tables at 8 heads, page links that wrap."""

import pytest
from app_helpers import errors_of, open_page

from course.app import ui
from course.common import i18n
from course.lessons import ch02


def test_ch02_legend_shows_whole_curve_names_below_the_plot():
    labels = {"average": "a", "nw": i18n.t("ch02.curve_nw", "en"), "trained": i18n.t("ch02.curve_trained", "en")}
    spec = ch02.fit_spec(1.0, 2.0, tuple(labels.items()))
    legends = [layer["encoding"]["color"]["legend"] for layer in spec["layer"] if "color" in layer.get("encoding", {})]
    assert legends and all(legend["labelLimit"] == 0 and legend["orient"] == "bottom" for legend in legends)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ch04_hull_table_is_a_table_with_its_whole_headers(lang):
    at = open_page("app_pages/ch04_bahdanau.py", lang=lang)
    assert errors_of(at) == []
    header = i18n.t("ch04.convex.col_top", lang)
    assert any(header in table.value.columns for table in at.table)
    assert not any(header in frame.value.columns for frame in at.dataframe)


def test_ch03_learning_table_is_a_table():
    at = open_page("app_pages/ch03_scoring.py", lang="en")
    assert errors_of(at) == []
    header = i18n.t("ch03.learn.col_max_weight", "en")
    assert any(header in table.value.columns for table in at.table)


def test_ch05_per_head_tables_take_the_full_width_at_8_heads():
    at = open_page("app_pages/ch05_multihead.py", lang="en")
    assert errors_of(at) == []
    before = len(at.columns)
    at.select_slider(key="ch05_num_heads").set_value(8).run()
    assert errors_of(at) == []
    assert len(at.columns) == before - 2  # the heatmap | tables split is gone: the tables sit below, full width
    assert len(at.dataframe) >= 2


def test_page_links_in_the_main_area_wrap():
    assert 'stPageLink-NavLink' in ui.FOCUS_CSS and "white-space: normal" in ui.FOCUS_CSS


def test_the_focus_css_has_no_markup_inside_its_style_block():
    """st.html's sanitiser drops a <style> whose text holds "<" (a comment naming <input> removed all the CSS)."""
    css = ui.FOCUS_CSS.strip()
    assert css.startswith("<style>") and css.endswith("</style>")
    assert "<" not in css[len("<style>"):-len("</style>")]
    assert ":focus-visible" in css and "outline: 3px solid" in css
