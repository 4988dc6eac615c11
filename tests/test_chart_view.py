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
    wire = wire_spec(original, "weights: its summary follows")
    assert wire["description"] == "weights: its summary follows"
    assert wire["data"] == {"name": INLINE_DATA}
    assert rows_of(wire["datasets"][INLINE_DATA]) == original["data"]["values"]
    assert original["data"]["values"][2] == {"x": 2, "y": 0.7}  # the cached spec itself is left as it was
    assert {k: v for k, v in wire.items() if k not in ("data", "datasets", "description")} == \
        {k: v for k, v in original.items() if k != "data"}


def test_named_datasets_go_as_arrow_named_by_their_place():
    rows = [{"a": "x", "b": 1.5}, {"a": "y", "b": -2.0}]
    layered = {"datasets": {"data-1f": rows}, "layer": [{"data": {"name": "data-1f"}, "mark": "rect"}]}
    wire = wire_spec(layered, "two cells")
    assert list(wire["datasets"]) == ["data-0"] and isinstance(wire["datasets"]["data-0"], bytes)
    assert pd.DataFrame(rows_of(wire["datasets"]["data-0"])).equals(pd.DataFrame(rows))
    assert wire["layer"] == [{"data": {"name": "data-0"}, "mark": "rect"}] and "data" not in wire
    assert layered["layer"][0]["data"] == {"name": "data-1f"}  # the cached spec itself is left as it was


def altair_heatmap(values):
    import altair as alt

    frame = pd.DataFrame([{"row": r, "col": c, "v": v} for r, row in enumerate(values) for c, v in enumerate(row)])
    base = alt.Chart(frame).encode(x="col:O", y="row:O")
    return alt.layer(base.mark_rect().encode(color="v:Q"), base.mark_text().encode(text="v:Q")).to_dict()


def test_a_chart_whose_numbers_change_keeps_its_sent_spec_so_the_browser_updates_it_in_place():
    # Streamlit's browser side draws a chart anew when its spec, its datasets' names or their row counts change,
    # and otherwise only swaps the data; Altair names a dataset by a hash of its rows.
    before, after = altair_heatmap([[0.1, 0.9], [0.5, 0.5]]), altair_heatmap([[0.3, 0.7], [0.5, 0.5]])
    assert list(before["datasets"]) != list(after["datasets"])
    sent = [wire_spec(s, "weights: its summary follows") for s in (before, after)]
    assert [{k: v for k, v in w.items() if k != "datasets"} for w in sent][0] == \
        {k: v for k, v in sent[1].items() if k != "datasets"}
    assert list(sent[0]["datasets"]) == list(sent[1]["datasets"]) == ["data-0"]
    assert sent[0]["datasets"]["data-0"] != sent[1]["datasets"]["data-0"]  # the numbers themselves do travel
