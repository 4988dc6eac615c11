"""show_chart's cache key for a chart's prepared form (a digest of the spec that any change of its data moves), and
the spec it sends (wire_spec: its inline tables as Arrow)."""

import pandas as pd
from streamlit import dataframe_util

from course.app.chart_view import INLINE_DATA, spec_digest, wire_spec


def spec(values, title="weights"):
    return {"title": title, "mark": "bar", "data": {"values": [{"x": i, "y": v} for i, v in enumerate(values)]},
            "encoding": {"x": {"field": "x", "type": "ordinal"}, "y": {"field": "y", "type": "quantitative"}}}


def test_one_changed_value_or_title_gives_another_key():
    base = spec([0.1, 0.2, 0.7])
    assert spec_digest(base) != spec_digest(spec([0.1, 0.2, 0.70001]))
    assert spec_digest(base) != spec_digest(spec([0.1, 0.2, 0.7], title="weight"))
    assert spec_digest(base) != spec_digest(spec([0.2, 0.1, 0.7]))


def test_the_same_chart_built_again_keeps_its_key():
    a, b = spec([0.1, 0.2, 0.7]), spec([0.1, 0.2, 0.7])
    assert spec_digest(a) == spec_digest(b)
    # Built in another key order it is another entry (the digest is of the pickle): never another chart's.
    reordered = dict(reversed(list(b.items())))
    assert spec_digest(reordered) not in (spec_digest(spec([0.1, 0.2, 0.70001])), spec_digest(spec([0.2, 0.1, 0.7])))


def rows_of(arrow_bytes):
    return dataframe_util.convert_arrow_bytes_to_pandas_df(arrow_bytes).to_dict("records")


def test_the_sent_spec_carries_its_inline_rows_as_arrow_and_its_description():
    original = spec([0.1, 0.2, 0.7])
    wire = wire_spec(original, "the largest bar is 2 (0.70)")
    assert wire["description"] == "the largest bar is 2 (0.70)"
    assert wire["data"] == {"name": INLINE_DATA}
    assert rows_of(wire["datasets"][INLINE_DATA]) == original["data"]["values"]
    assert original["data"]["values"][2] == {"x": 2, "y": 0.7}  # the cached spec itself is left as it was
    assert {k: v for k, v in wire.items() if k not in ("data", "datasets", "description")} == \
        {k: v for k, v in original.items() if k != "data"}


def test_named_datasets_go_as_arrow_and_named_data_stays_named():
    rows = [{"a": "x", "b": 1.5}, {"a": "y", "b": -2.0}]
    layered = {"datasets": {"data-1f": rows}, "layer": [{"data": {"name": "data-1f"}, "mark": "rect"}]}
    wire = wire_spec(layered, "two cells")
    assert list(wire["datasets"]) == ["data-1f"] and isinstance(wire["datasets"]["data-1f"], bytes)
    assert pd.DataFrame(rows_of(wire["datasets"]["data-1f"])).equals(pd.DataFrame(rows))
    assert wire["layer"] == layered["layer"] and "data" not in wire
