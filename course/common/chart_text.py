"""What a chart shows, in words and as a table: the text alternative of a Vega-Lite chart (pure functions).

`summary(spec, lang)` is one sentence in the learner's language (for attention weights: the strongest ones);
`table(spec)` is the same numbers as a DataFrame. Both read the first data mark of the spec (a heatmap's
cells, the bars, the lines or points: not the value labels or rules layered on them) and its data, from the
spec's `datasets`, inline values, or the table passed beside the spec. Nothing here imports Streamlit.
"""

import json
import math

import pandas as pd
import pyarrow as pa

from course.common.charts import CELL_VALUES
from course.common.i18n import t

DATA_MARKS = ("rect", "bar", "line", "area", "point", "circle", "square", "tick")
TOP = 3  # cells a heatmap's sentence names
TIED = 4  # bars named where several share the highest or the lowest value (then "and N more")
WEIGHT_TOLERANCE = 1e-3  # a row of attention weights sums to 1 (or to 0 where everything is masked)


def _mark(unit):
    """The mark type of a unit spec ('rect', 'line', ...)."""
    mark = unit.get("mark")
    return mark.get("type") if isinstance(mark, dict) else mark


def records(data):
    """Rows as a list of dicts from what a spec or a page holds: records, a DataFrame, an Arrow table, or
    Arrow IPC bytes (course.common.arrow)."""
    if isinstance(data, (bytes, bytearray)):
        data = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    if isinstance(data, pa.Table):
        return data.to_pylist()
    if isinstance(data, pd.DataFrame):
        return data.to_dict("records")
    return list(data or [])


def _rows(spec, data, datasets, inherited):
    """The data rows of `spec` (a list of dicts): its own data, or what it inherits."""
    source = spec.get("data")
    if isinstance(source, dict) and "name" in source and source["name"] in datasets:
        return records(datasets[source["name"]])
    if isinstance(source, dict) and "values" in source:
        return records(source["values"])
    if inherited is not None:
        return inherited
    return records(data)


def data_units(spec, data=None):
    """[(unit spec with its inherited encoding, its rows)] of every data mark with x and y, in drawing order.
    Units that filter their data (an outline on one cell) are left out."""
    datasets = spec.get("datasets", {})
    found = []

    def walk(node, rows, encoding):
        rows = _rows(node, data, datasets, rows)
        encoding = {**encoding, **node.get("encoding", {})}
        for part in ("layer", "hconcat", "vconcat", "concat"):
            for child in node.get(part, []):
                walk(child, rows, encoding if part == "layer" else {})
        if _mark(node) in DATA_MARKS and "x" in encoding and "y" in encoding and not node.get("transform"):
            found.append(({**node, "encoding": encoding}, rows))

    walk(spec, None, {})
    return found


def _title(spec, lang):
    """The chart's title as plain text, or the catalog's word for an untitled chart."""
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(str(part) for part in title)
    return str(title).strip() if title else t("charts.untitled", lang)


def _channel_title(encoding, channel, lang):
    """The axis (or legend) title of a channel, else a word in `lang` for it (never a field's name)."""
    title = (encoding.get(channel) or {}).get("title")
    if title and str(title).strip():
        return str(title)
    words = {"y": "charts.value", "color": "charts.series", "text": "charts.label"}
    return t(words[channel], lang) if channel in words else channel


def _labeller(encoding, channel, rows):
    """value -> the label the axis shows for it: a heatmap's `row_label`/`col_label` column, an axis
    `labelExpr` listing labels by index (course.common.charts), or the value itself."""
    field = (encoding.get(channel) or {}).get("field")
    companion = {"row": "row_label", "col": "col_label"}.get(field)
    if companion and rows and companion in rows[0]:
        names = {row[field]: str(row[companion]) for row in rows}
        return lambda value: names.get(value, str(value))
    expr = ((encoding.get(channel) or {}).get("axis") or {}).get("labelExpr", "")
    if expr.endswith("[datum.value]"):
        try:
            labels = json.loads(expr[: -len("[datum.value]")])
            return lambda value: str(labels[int(value)]) if 0 <= int(value) < len(labels) else str(value)
        except (ValueError, TypeError):
            pass
    return lambda value: _number(value) if isinstance(value, float) else str(value)


def _number(value):
    """A value for a sentence or a table cell: 3 significant digits, no exponent for everyday sizes."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if float(value).is_integer() and abs(value) < 1e7:  # counts and years in full: 2014, not 2.01e+03
            return str(int(value))
        return f"{value:.3g}"
    return str(value)


def _finite(value):
    """True for a number that is not NaN or infinite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _kind(unit):
    """'heatmap', 'bars', 'lines' or 'points': how a unit's data is read."""
    mark, encoding = _mark(unit), unit["encoding"]
    if mark == "rect" and (encoding.get("color") or {}).get("type") == "quantitative":
        return "heatmap"
    return {"bar": "bars", "line": "lines", "area": "lines"}.get(mark, "points")


def _cells(unit, rows):
    """A heatmap's cells: [(row value, column value, value)] for every cell that holds a number."""
    encoding = unit["encoding"]
    x, y, colour = (encoding[c]["field"] for c in ("x", "y", "color"))
    return [(row[y], row[x], row[colour]) for row in rows if _finite(row.get(colour))]


def are_weights(cells):
    """True when the cells form attention weights: every value in [0, 1] and each row summing to 1 (or 0)."""
    if not cells or any(not 0 <= value <= 1 for _, _, value in cells):
        return False
    sums = {}
    for row, _, value in cells:
        sums[row] = sums.get(row, 0.0) + value
    return all(abs(total - 1) <= WEIGHT_TOLERANCE or total <= WEIGHT_TOLERANCE for total in sums.values())


def heatmap_summary(unit, rows, title, lang):
    """One sentence: the grid's size and its largest cells (for attention weights: the strongest weights)."""
    encoding = unit["encoding"]
    cells = _cells(unit, rows)
    if not cells:
        return t("charts.empty", lang, title=title)
    row_name, col_name = _labeller(encoding, "y", rows), _labeller(encoding, "x", rows)
    order = sorted(range(len(cells)), key=lambda i: -cells[i][2])[:TOP]  # stable: ties keep the drawing order
    top = t("charts.list_sep", lang).join(
        t("charts.cell", lang, row=row_name(cells[i][0]), col=col_name(cells[i][1]), value=_number(cells[i][2]))
        for i in order)
    shape = {"rows": len({c[0] for c in cells}), "cols": len({c[1] for c in cells})}
    values = [c[2] for c in cells]
    at_max = sum(value == max(values) for value in values)
    tied = "_tied" if at_max > TOP else ""  # the "largest" of a 0/1 grid would be any three of its ones
    if are_weights(cells):
        return t(f"charts.weights{tied}", lang, title=title, top=top, count=at_max, high=_number(max(values)),
                 **shape)
    return t(f"charts.heatmap{tied}", lang, title=title, top=top, low=_number(min(values)),
             high=_number(max(values)), count=at_max, **shape)


def _series(unit, rows):
    """{series name: [(x, y)]} of a unit, one series per colour value (one unnamed series without colour);
    points without a finite y are left out."""
    encoding = unit["encoding"]
    x, y = encoding["x"]["field"], encoding["y"]["field"]
    colour = (encoding.get("color") or {}).get("field")
    groups = {}
    for row in rows:
        if _finite(row.get(y)):
            groups.setdefault(str(row[colour]) if colour else "", []).append((row[x], row[y]))
    return groups


def bars_summary(unit, rows, title, lang):
    """One sentence: the number of bars, the highest and the lowest (with its series when bars are grouped)."""
    encoding = unit["encoding"]
    x_name = _labeller(encoding, "x", rows)
    bars = [(name, xv, yv) for name, points in _series(unit, rows).items() for xv, yv in points]
    if not bars:
        return t("charts.empty", lang, title=title)
    grouped = (encoding.get("color") or {}).get("field") not in (None, encoding["x"]["field"])

    def label(bar):
        return f"{bar[0]}, {x_name(bar[1])}" if grouped else x_name(bar[1])

    def named(value):
        """Every bar at this value (the first TIED, then how many more): a tie is never one bar's alone."""
        at = [label(bar) for bar in bars if bar[2] == value]
        names = t("charts.name_sep", lang).join(at[:TIED])
        return names if len(at) <= TIED else t("charts.and_more", lang, names=names, more=len(at) - TIED)

    high = max(bar[2] for bar in bars)
    low = min(bar[2] for bar in bars)
    return t("charts.bars", lang, title=title, count=len(bars), measure=_channel_title(encoding, "y", lang),
             high=named(high), high_value=_number(high), low=named(low), low_value=_number(low))


def lines_summary(unit, rows, title, lang):
    """One sentence: for each line, its value at the smallest and at the largest x."""
    encoding = unit["encoding"]
    x_name = _labeller(encoding, "x", rows)
    parts = []
    for name, points in _series(unit, rows).items():
        points = sorted(points, key=lambda p: p[0])
        first, last = points[0], points[-1]
        parts.append(t("charts.line", lang, name=name, x0=x_name(first[0]), y0=_number(first[1]),
                       x1=x_name(last[0]), y1=_number(last[1])).strip())
    if not parts:
        return t("charts.empty", lang, title=title)
    return t("charts.lines", lang, title=title, measure=_channel_title(encoding, "y", lang),
             against=_channel_title(encoding, "x", lang), lines=t("charts.list_sep", lang).join(parts))


def points_summary(unit, rows, title, lang):
    """One sentence: the number of points and the range of x."""
    encoding = unit["encoding"]
    x = encoding["x"]["field"]
    xs = [row[x] for row in rows if _finite(row.get(x))]
    if not xs:
        return t("charts.points_only", lang, title=title, count=len(rows))
    return t("charts.points", lang, title=title, count=len(rows), against=_channel_title(encoding, "x", lang),
             low=_number(min(xs)), high=_number(max(xs)))


SUMMARIES = {"heatmap": heatmap_summary, "bars": bars_summary, "lines": lines_summary, "points": points_summary}


def title(spec, lang):
    """The chart's title (its first titled part's), or the catalog's word for an untitled chart."""
    if not spec.get("title"):
        for part in ("layer", "hconcat", "vconcat", "concat"):
            titled = [child for child in spec.get(part, []) if child.get("title")]
            if titled:
                return _title(titled[0], lang)
    return _title(spec, lang)


def summary(spec, lang, data=None):
    """What the chart `spec` shows, in `lang` (None when it has no data mark): one sentence for its first data
    mark, and one for each further mark of another kind or another data (a fit chart's curves over its points),
    which "Also" opens."""
    units = data_units(spec, data)
    if not units:
        return None
    unit, rows = units[0]
    title = _title(unit if unit.get("title") else spec, lang)
    said = SUMMARIES[_kind(unit)](unit, rows, title, lang)
    for other, other_rows in units[1:]:
        if (_kind(other), other_rows) != (_kind(unit), rows):  # not a second drawing of the same numbers
            said += t("charts.sentence_sep", lang) + SUMMARIES[_kind(other)](
                other, other_rows, t("charts.also", lang), lang)
    if values_in_table(spec):
        said = t("charts.values_in_table", lang, summary=said)
    return said


def values_in_table(spec):
    """Does the chart say its cells are too small to print their values (course.common.charts.values_in_table)?"""
    return (spec.get("usermeta") or {}).get(CELL_VALUES) == "table"


def _unique(names):
    """Column or row names made unique (a repeated word gets its position: 'the (4)')."""
    seen = {name: names.count(name) for name in names}
    return [f"{name} ({i})" if seen[name] > 1 else name for i, name in enumerate(names)]


def table(spec, lang, data=None):
    """The chart's numbers as a DataFrame of strings (None when it has no data mark): a heatmap as its grid
    (rows and columns labelled as on its axes), lines with one column per line, bars and points as rows."""
    units = data_units(spec, data)
    if not units:
        return None
    unit, rows = units[0]
    encoding, kind = unit["encoding"], _kind(unit)
    x_title, y_title = _channel_title(encoding, "x", lang), _channel_title(encoding, "y", lang)
    x_name = _labeller(encoding, "x", rows)
    if kind == "heatmap":
        cells = {(r, c): v for r, c, v in _cells(unit, rows)}
        y_field, x_field = encoding["y"]["field"], encoding["x"]["field"]
        row_keys = list(dict.fromkeys(row[y_field] for row in rows))
        col_keys = list(dict.fromkeys(row[x_field] for row in rows))
        y_name = _labeller(encoding, "y", rows)
        grid = [[_number(cells.get((r, c))) for c in col_keys] for r in row_keys]
        return pd.DataFrame(grid, index=_unique([y_name(r) for r in row_keys]),
                            columns=_unique([x_name(c) for c in col_keys]))
    series = _series(unit, rows)
    if kind == "lines" and any(series):
        xs = sorted({xv for points in series.values() for xv, _ in points})
        columns = {x_title: [x_name(xv) for xv in xs]}
        for name, points in series.items():
            values = dict(points)
            columns[name or y_title] = [_number(values.get(xv)) for xv in xs]
        return pd.DataFrame(columns)
    if kind == "bars":
        colour = (encoding.get("color") or {}).get("field")
        frame = {x_title: [x_name(xv) for points in series.values() for xv, _ in points]}
        if colour and colour != encoding["x"]["field"]:
            frame[_channel_title(encoding, "color", lang)] = [n for n, pts in series.items() for _ in pts]
        frame[y_title if y_title != x_title else f"{y_title} (y)"] = [
            _number(yv) for points in series.values() for _, yv in points]
        return pd.DataFrame(frame)
    return _points_table(encoding, rows, lang)


def _points_table(encoding, rows, lang):
    """Points as rows: one column per encoded field (x, y, colour, text), titled as on the chart."""
    columns, fields = {}, []
    for channel in ("x", "y", "color", "text"):
        field = (encoding.get(channel) or {}).get("field")
        if field and field not in fields:
            fields.append(field)
            name = _labeller(encoding, channel, rows) if channel in ("x", "y") else str
            title = _channel_title(encoding, channel, lang)
            columns[title if title not in columns else f"{title} ({channel})"] = [
                _number(row.get(field)) if _finite(row.get(field)) else name(row.get(field)) for row in rows]
    return pd.DataFrame(columns)
