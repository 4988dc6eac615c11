"""show_chart's cache key for a chart's text alternative: a digest of the spec that any change of its data moves."""

from course.app.chart_view import spec_digest


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
    reordered = dict(reversed(list(b.items())))  # the same spec, its keys in another order
    assert spec_digest(a) == spec_digest(b) == spec_digest(reordered)
