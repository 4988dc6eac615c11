"""Shared Altair charts: heatmaps (attention weights and the like), lines and bars.

Every chapter draws with these, so the signatures stay stable. Each returns an
`alt.Chart`; callers hand `chart.to_dict()` to the page, which draws it with
`course.app.chart_view.show_chart`. Nothing here imports Streamlit.
"""

import json

import altair as alt
import numpy as np
import pandas as pd


def _labels(labels, count, prefix):
    """Axis labels as strings; plain numbers (0, 1, ...: the same in every language) when none are given."""
    if labels is None:
        return [str(i) for i in range(count)]
    labels = [str(label) for label in labels]
    if len(labels) != count:
        raise ValueError(f"got {len(labels)} labels for {count} {prefix.strip() or 'items'}; give one per row/column")
    return labels


def _label_expr(labels):
    """A Vega expression that shows labels[index] on an axis of indices."""
    return f"{json.dumps(labels, ensure_ascii=False)}[datum.value]"


# Vega's continuous colour schemes (vega-scale's palettes, the colours it interpolates in RGB between):
# the heatmap needs the colour of each cell to choose a readable label colour. Heatmaps default to viridis:
# perceptually uniform, its lightness rising from dark violet to yellow, so it reads the same with the common
# colour-vision deficiencies and in greyscale; redblue is kept for signed values around 0.
SCHEME_RAMPS = {
    "blues": "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
    "redblue": "8c0d25bf363adf745ef4ae91fbdbc9f2efeed2e5ef9dcae15da2cb2f78b3134b85",
    "viridis": "440154470e61481a6c482575472f7d443a834144873d4e8a39568c35608d31688e2d708e2a788e27818e23888e21918d"
               "1f988b1fa08822a8842ab07f35b77943bf7154c56866cc5d7ad1518fd744a5db36bcdf27d2e21be9e51afde725",
}
DEFAULT_SCHEME = "viridis"
MAIN_WIDTH_PX = 930  # the page's main column at a 1400 px wide window (the sidebar open)
LABEL_FONT_PX = 11  # the value labels drawn in heatmap cells
# Widths (em) of the labels' characters in Vega's sans-serif (Arial/Helvetica metrics); d3 writes minus as U+2212.
CHAR_EM = {".": 0.28, ",": 0.28, "-": 0.59, "\u2212": 0.59, **{digit: 0.56 for digit in "0123456789"}}
CELL_MARGIN_PX = 4  # a label keeps 2 px clear of its cell's edges
CELL_VALUES = "cell_values"  # the spec's usermeta key: "table" when the cells are too small for their values


def scheme_colour(scheme, position):
    """The (r, g, b) 0-255 colour Vega draws at `position` in [0, 1] of a continuous scheme."""
    if scheme not in SCHEME_RAMPS:
        raise ValueError(f"no colour ramp for scheme {scheme!r}; use one of {', '.join(SCHEME_RAMPS)}")
    ramp = SCHEME_RAMPS[scheme]
    stops = np.array([[int(ramp[i + k:i + k + 2], 16) for k in (0, 2, 4)] for i in range(0, len(ramp), 6)], float)
    x = min(max(float(position), 0.0), 1.0) * (len(stops) - 1)
    low = min(int(x), len(stops) - 2)
    return tuple(stops[low] + (stops[low + 1] - stops[low]) * (x - low))


def relative_luminance(rgb):
    """WCAG 2 relative luminance of an (r, g, b) 0-255 colour (0 black .. 1 white)."""
    channels = np.asarray(rgb, float) / 255
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast_ratio(first, second):
    """WCAG 2 contrast ratio of two (r, g, b) colours (1 .. 21)."""
    light, dark = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def label_colour(background):
    """'black' or 'white', whichever contrasts more with the (r, g, b) `background` of a cell."""
    on_black = contrast_ratio(background, (0, 0, 0))
    return "black" if on_black >= contrast_ratio(background, (255, 255, 255)) else "white"


def cell_label_colours(values, scheme, domain=None):
    """The label colour of each value's cell: the scheme's colour at the value's place in `domain`
    (or the values' range), then label_colour. NaN cells (drawn empty) get black."""
    values = np.asarray(values, float)
    finite = values[np.isfinite(values)]
    low, high = domain if domain else ((finite.min(), finite.max()) if finite.size else (0.0, 1.0))
    span = (high - low) or 1.0
    return [
        "black" if not np.isfinite(v) else label_colour(scheme_colour(scheme, (v - low) / span))
        for v in values.ravel()
    ]


def label_width_px(text, font_px=LABEL_FONT_PX):
    """How wide a value label is drawn, in px (an unknown character counts as a wide one)."""
    return sum(CHAR_EM.get(ch, 0.62) for ch in text) * font_px


def labels_fit(values, value_format, cell_width, cell_height=None, font_px=LABEL_FONT_PX):
    """Does every finite value, written with `value_format` (a fixed format such as '.2f'), fit inside a cell of
    cell_width x cell_height px (square when no height) with CELL_MARGIN_PX to spare?"""
    finite = [v for v in np.asarray(values, float).ravel() if np.isfinite(v)]
    widest = max((label_width_px(format(v, value_format), font_px) for v in finite), default=0.0)
    return widest + CELL_MARGIN_PX <= cell_width and font_px + CELL_MARGIN_PX <= (cell_height or cell_width)


def values_in_table(spec):
    """A heatmap's Vega-Lite dict marked as one whose values are read in its table, its cells being too small to
    print them (course.common.chart_text says so in the chart's description)."""
    return {**spec, "usermeta": {**spec.get("usermeta", {}), CELL_VALUES: "table"}}


BIG_HEATMAP = 400  # cells above which a heatmap without printed values is drawn on a canvas


def heatmap(
    data, row_labels=None, col_labels=None, title="", *,
    x_title="", y_title="", value_title=None, scheme=DEFAULT_SCHEME,
    show_values=False, value_format=".2f", domain=None, cell_size=None,
):
    """A heatmap of a 2-D array or DataFrame: rows on the y axis, columns on x.

    Rows and columns keep their order, and repeated labels (two "the"s) stay
    separate cells. A DataFrame supplies its index/columns as labels unless
    labels are passed. `value_title` names the colour legend (none by default: no English
    "value" in a Chinese page). With `show_values`, each cell prints its value when every label fits
    the cells as drawn (labels_fit); otherwise the chart is marked as one read in its table (values_in_table).
    """
    if isinstance(data, pd.DataFrame):
        row_labels = list(data.index) if row_labels is None else row_labels
        col_labels = list(data.columns) if col_labels is None else col_labels
        data = data.to_numpy()
    values = np.asarray(data, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D array, got shape {values.shape}")
    num_rows, num_cols = values.shape
    rows = _labels(row_labels, num_rows, "rows")
    cols = _labels(col_labels, num_cols, "columns")
    frame = pd.DataFrame(
        [
            {"row": i, "col": j, "row_label": rows[i], "col_label": cols[j], "value": values[i, j]}
            for i in range(num_rows)
            for j in range(num_cols)
        ]
    )
    size = cell_size or 28
    width, height = min(640, size * num_cols), min(720, size * num_rows + 120)
    too_small = show_values and not labels_fit(values, value_format, width / num_cols, (height - 120) / num_rows)
    show_values = show_values and not too_small
    if show_values:  # each label black or white by the luminance of its own cell's colour
        frame["label_colour"] = cell_label_colours(values, scheme, domain)
    scale = alt.Scale(scheme=scheme, domain=domain) if domain else alt.Scale(scheme=scheme)
    base = alt.Chart(frame).encode(
        x=alt.X("col:O", title=x_title, axis=alt.Axis(labelExpr=_label_expr(cols), labelAngle=0)),
        y=alt.Y("row:O", title=y_title, axis=alt.Axis(labelExpr=_label_expr(rows), labelOverlap=False)),
    )
    # Above BIG_HEATMAP cells without printed values: drawn on a canvas, without an accessible name per cell (a
    # screen reader would list hundreds of cells, where the summary under the chart and its table say them; as SVG
    # elements they took about 0.1 s on every data update: chapter 15's two 32 x 32 maps, 227 -> 163 ms a step).
    big = num_rows * num_cols > BIG_HEATMAP and not show_values
    cells = (base.mark_rect(aria=False) if big else base.mark_rect()).encode(
        color=alt.Color("value:Q", title=value_title, scale=scale),
        tooltip=[
            alt.Tooltip("row_label:N", title=y_title or "i"),
            alt.Tooltip("col_label:N", title=x_title or "j"),
            alt.Tooltip("value:Q", title=value_title or " ", format=value_format),
        ],
    )
    chart = cells
    if show_values:
        text = base.mark_text(fontSize=LABEL_FONT_PX).encode(
            text=alt.Text("value:Q", format=value_format),
            color=alt.condition(alt.datum.label_colour == "white", alt.value("white"), alt.value("black")),
        )
        chart = cells + text
    # Streamlit fits the whole chart (title and axes too) into `height`: leave room for them.
    chart = chart.properties(title=title, width=width, height=height)
    meta = {CELL_VALUES: "table"} if too_small else {}
    if big:
        meta["embedOptions"] = {"renderer": "canvas"}
    return chart.properties(usermeta=meta) if meta else chart


def line_chart(
    df, x, y, color=None, title="", *, x_title=None, y_title=None, color_title=None,
    log_y=False, points=False, stroke_dash=None, height=300,
):
    """Lines of y against x from a long DataFrame, one line per `color` value."""
    scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    encoding = {
        "x": alt.X(f"{x}:Q", title=x if x_title is None else x_title),
        "y": alt.Y(f"{y}:Q", title=y if y_title is None else y_title, scale=scale),
        "tooltip": [alt.Tooltip(x, title=x if x_title is None else x_title),  # titles, not field names
                    alt.Tooltip(y, title=y if y_title is None else y_title)]
        + ([alt.Tooltip(color, title=color if color_title is None else (color_title or " "))] if color else []),
    }
    if color:
        encoding["color"] = alt.Color(f"{color}:N", title=color if color_title is None else color_title,
                                      scale=fixed_domain(df[color]))
    if stroke_dash:
        encoding["strokeDash"] = alt.StrokeDash(f"{stroke_dash}:N", legend=None)
    return alt.Chart(df).mark_line(point=points).encode(**encoding).properties(title=title, height=height)


def fixed_domain(values):
    """A colour scale over `values` in the order they first appear.

    Vega colours categories in sorted order by default, so the same series got
    different colours in English and Chinese (the labels sort differently). Callers
    list their series in a language-independent order; this keeps that order.
    """
    return alt.Scale(domain=list(dict.fromkeys(str(v) for v in values)))


def bar_chart(df, x, y, color=None, title="", *, x_title=None, y_title=None, sort=None, height=300, labels=True,
              label_format=".3~f"):
    """Bars of y for each category x (kept in `sort` order, or the data's order); labels in `label_format`."""
    order = sort if sort is not None else list(dict.fromkeys(df[x].tolist()))
    base = alt.Chart(df).encode(
        x=alt.X(f"{x}:N", title=x if x_title is None else x_title, sort=order, axis=alt.Axis(labelAngle=0)),
        y=alt.Y(f"{y}:Q", title=y if y_title is None else y_title),
        tooltip=[alt.Tooltip(x, title=x if x_title is None else x_title),
                 alt.Tooltip(y, title=y if y_title is None else y_title)],
    )
    colours = order if color is None else df[color]
    bars = base.mark_bar().encode(
        color=alt.Color(f"{color or x}:N", legend=None, scale=fixed_domain(colours))
    )
    chart = bars + base.mark_text(dy=-8).encode(text=alt.Text(f"{y}:Q", format=label_format)) if labels else bars
    return chart.properties(title=title, height=height)


def position_bar_chart(labels, values, *, x_title="", y_title="", height=300, label_format=".3~f"):
    """One bar per position (a repeated word keeps its own bar), the axis labelled by word, values on top."""
    frame = pd.DataFrame({"position": range(len(labels)), "label": [str(w) for w in labels],
                          "value": [float(v) for v in values]})
    base = alt.Chart(frame).encode(
        x=alt.X("position:O", title=x_title, axis=alt.Axis(labelExpr=_label_expr(frame["label"].tolist()),
                                                            labelAngle=0)),
        y=alt.Y("value:Q", title=y_title),
        tooltip=[alt.Tooltip("position:O", title="#"), alt.Tooltip("label:N", title=x_title or " "),
                 alt.Tooltip("value:Q", title=y_title or " ", format=label_format)],
    )
    bars = base.mark_bar().encode(color=alt.Color("position:N", legend=None))
    text = base.mark_text(dy=-8).encode(text=alt.Text("value:Q", format=label_format))
    return (bars + text).properties(height=height)


def series_colour(field, domain, colours):
    """A colour encoding with fixed colours per series position (not per label text), legend below."""
    return alt.Color(f"{field}:N", title=None, scale=alt.Scale(domain=list(domain), range=list(colours)),
                     legend=alt.Legend(orient="bottom"))
