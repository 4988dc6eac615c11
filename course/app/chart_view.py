"""show_chart: the one way a chart reaches Streamlit, as a Vega-Lite dict (what the lessons' builders return)."""


def show_chart(where, spec, *, data=None, width=None, key=None):
    """Draw the Vega-Lite `spec` in `where` (st, a column, a slot); `data` is a table passed beside the spec."""
    if not isinstance(spec, dict):
        raise TypeError(f"show_chart takes a Vega-Lite dict (chart.to_dict()), not {type(spec).__name__}")
    return where.vega_lite_chart(data, spec, width=width, key=key)
