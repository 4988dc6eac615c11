"""The same page in English and Chinese: same colours for the same series, no English left in Chinese tables."""

import json

import pytest
from app_helpers import errors_of, open_page
from streamlit import dataframe_util

from course.common import pages_index

CHART_PAGES = ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch10", "ch11", "ch12")  # the course's own charts


def colour_encodings(spec):
    """Every colour encoding of a nominal/ordinal field in a Vega-Lite dict (layers included)."""
    found = []
    if isinstance(spec, dict):
        colour = spec.get("encoding", {}).get("color") if isinstance(spec.get("encoding"), dict) else None
        if isinstance(colour, dict) and colour.get("type") in ("nominal", "ordinal") and "field" in colour:
            found.append(colour)
        for value in spec.values():
            found.extend(colour_encodings(value))
    elif isinstance(spec, list):
        for value in spec:
            found.extend(colour_encodings(value))
    return found


def field_values(chart, field):
    """The sorted distinct values of `field` in a chart's data (the order Vega colours them in)."""
    values = set()
    for dataset in chart.proto.datasets:
        frame = dataframe_util.convert_arrow_bytes_to_pandas_df(dataset.data.data)
        if field in frame.columns:
            values.update(map(str, frame[field]))
    spec = json.loads(chart.proto.spec)
    for data in spec.get("datasets", {}).values():
        values.update(str(row[field]) for row in data if isinstance(row, dict) and field in row)
    return sorted(values)


def chart_colours(at):
    """Per chart: [(field, colour domain, or the sorted values it colours when no domain is fixed)]."""
    shown = []
    for chart in at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart"):
        encodings = colour_encodings(json.loads(chart.proto.spec))
        shown.append([(c["field"], (c.get("scale") or {}).get("domain"), field_values(chart, c["field"]))
                      for c in encodings])
    return shown


def test_colour_check_can_fail():
    spec = {"layer": [{"encoding": {"color": {"field": "curve", "type": "nominal"}}}]}
    assert colour_encodings(spec) == [{"field": "curve", "type": "nominal"}]


@pytest.mark.parametrize("key", CHART_PAGES)
@pytest.mark.slow
def test_series_keep_their_colour_across_languages(key):
    """Vega colours categories in sorted order unless told a domain; translated labels sort differently,
    so each categorical colour scale must list its series (in a language-independent order)."""
    page = pages_index.get(key)
    colours = {}
    for lang in ("en", "zh"):
        at = open_page(page.path, lang)
        assert errors_of(at) == []
        colours[lang] = chart_colours(at)
    assert len(colours["en"]) == len(colours["zh"])
    for en, zh in zip(colours["en"], colours["zh"]):
        for (field, en_domain, en_values), (_, zh_domain, zh_values) in zip(en, zh):
            if en_domain is None or zh_domain is None:  # sorted labels: fine only if they are the same words
                assert en_values == zh_values, f"{key}: {field!r} is coloured by translated labels without a domain"
            else:
                assert len(en_domain) == len(zh_domain), (en_domain, zh_domain)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_titles_are_numbered_one_way(lang):
    """Page titles and menu entries read "N · title" on every chapter (not "N. title" on some)."""
    from course.common import i18n

    for number, page in enumerate(pages_index.chapters(), start=1):
        for key in (f"{page.key}.title", page.title_key):
            assert i18n.t(key, lang).startswith(f"{number} · "), (key, i18n.t(key, lang))
