"""Chapter 6, second half: why a Transformer needs positions, and sinusoidal positional encoding.

Streamlit-free. Self-attention without positions is blind to word order (the
permutation experiment); the sinusoidal table comes from
solutions.ex06_positional_encoding; the scale experiment shows why embeddings are
multiplied by sqrt(d) before P is added.
"""

import math

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from course.common import charts
from course.common.arrow import arrow_spec, arrow_table
from course.common.i18n import t
from course.lessons.ch05 import build_layer, embed
from solutions.ex06_positional_encoding import PositionalEncoding

BASE = 10000.0
MAX_HEATMAP_PX = (640, 720)  # (width, height) a heatmap of printed cells may take
DEFAULT_COLUMNS = (0, 1, 8, 20)  # columns of P drawn as curves until the learner picks others


# --- sinusoidal positional encoding -----------------------------------------------------------

def frequencies(num_hiddens):
    """omega_j = 1 / 10000^(2j / d) for each column pair j, float64 (ceil(d/2),)."""
    return 1.0 / BASE ** (np.arange(0, num_hiddens, 2, dtype=np.float64) / num_hiddens)


def sinusoid_table(length, num_hiddens):
    """P in float64 (length, d): P[i, 2j] = sin(i omega_j), P[i, 2j+1] = cos(i omega_j)."""
    angles = np.arange(length, dtype=np.float64)[:, None] * frequencies(num_hiddens)[None, :]  # (T, ceil(d/2))
    P = np.zeros((length, num_hiddens))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles[:, : num_hiddens // 2])
    return P  # (T, d)


def module_table(length, num_hiddens):
    """The reference PositionalEncoding's stored (float32) P[:length] as numpy (length, d)."""
    return PositionalEncoding(num_hiddens, 0.0, max_len=length).P[0].numpy()  # (T, d)


PE_CELL_PX = 34  # a cell of P's heatmap when its value is printed in it ("−0.99" at 11 px)
PE_ROW_PX = 6  # a row of P's heatmap when the table is too big for that: the values are in its table


def pe_heatmap(lang, length, num_hiddens):
    """(Arrow table, Vega-Lite spec) of the module's P as a heatmap: positions down, dimensions across.

    Each cell prints its value (black or white by its own colour) while P is small enough for cells of
    PE_CELL_PX; a larger P is drawn in thin rows and says its values are read in its table.
    The spec is written by hand and the data passed apart as an Arrow table (sent as is, no pandas
    conversion on every rerun), because it has up to length x d cells, more than Altair inlines.
    """
    P = module_table(length, num_hiddens)  # (T, d)
    pos, dim = np.meshgrid(np.arange(length), np.arange(num_hiddens), indexing="ij")  # (T, d) each
    columns = {"position": pos.ravel(), "dimension": dim.ravel(), "P": P.ravel().round(4)}
    printed = num_hiddens * PE_CELL_PX <= MAX_HEATMAP_PX[0] and length * PE_CELL_PX <= MAX_HEATMAP_PX[1] \
        and charts.labels_fit(P, ".2f", PE_CELL_PX)
    if printed:
        columns["label_colour"] = charts.cell_label_colours(P, "redblue", [-1, 1])
    every = lambda count: list(range(0, count, max(1, count // 16)))  # noqa: E731 (axis tick positions)
    title, x_title, y_title = (t(f"ch06.{key}", lang) for key in ("heatmap_title", "axis_dimension", "axis_position"))
    cells = {"mark": "rect", "encoding": {
        "color": {"field": "P", "type": "quantitative", "scale": {"scheme": "redblue", "domain": [-1, 1]}},
        "tooltip": [{"field": f, "type": "quantitative"} for f in ("position", "dimension", "P")]}}
    spec = {
        "title": title,
        "encoding": {
            "x": {"field": "dimension", "type": "ordinal", "title": x_title,
                  "axis": {"values": every(num_hiddens), "labelAngle": 0}},
            "y": {"field": "position", "type": "ordinal", "title": y_title, "axis": {"values": every(length)}},
        },
    }
    if not printed:
        return pa.table(columns), {**spec, **cells, "encoding": {**spec["encoding"], **cells["encoding"]},
                                   "height": min(420, PE_ROW_PX * length + 60), "usermeta": {charts.CELL_VALUES: "table"}}
    labels = {"mark": {"type": "text", "fontSize": charts.LABEL_FONT_PX}, "encoding": {
        "text": {"field": "P", "type": "quantitative", "format": ".2f"},
        "color": {"condition": {"test": "datum.label_colour == 'white'", "value": "white"}, "value": "black"}}}
    return pa.table(columns), {**spec, "width": num_hiddens * PE_CELL_PX, "height": length * PE_CELL_PX,
                               "layer": [cells, labels]}


def fit_columns(wanted, num_hiddens):
    """Split the learner's wanted curve columns into (drawn, set aside): the columns P has at this width
    and those beyond it (kept, to come back when num_hiddens grows again), each sorted and unique."""
    wanted = sorted({int(c) for c in wanted})
    return [c for c in wanted if c < num_hiddens], [c for c in wanted if c >= num_hiddens]


def columns_spec(length, num_hiddens, columns, x_title):
    """Line chart dict of the chosen columns of P against position (None when no column is chosen)."""
    if not columns:
        return None
    P = module_table(length, num_hiddens)  # (T, d)
    names = [f"P[:, {c}]" for c in sorted(columns)]  # the legend lists them in this (numeric) order
    frame = pd.DataFrame([{"position": i, "column": f"P[:, {c}]", "P": float(P[i, c])}
                          for c in columns for i in range(length)])
    chart = alt.Chart(frame).mark_line().encode(
        x=alt.X("position:Q", title=x_title), y=alt.Y("P:Q", title="P"),
        color=alt.Color("column:N", title=None, sort=names, scale=alt.Scale(domain=names)),
        tooltip=[alt.Tooltip("position:Q", title=x_title), alt.Tooltip("column:N", title=" "), "P"])
    return arrow_spec(chart.properties(height=260))


def encoding_view(lang, length, num_hiddens, columns):
    """{'curves': columns_spec, 'binary': binary_frame, 'periods': period_frame}, tables as Arrow."""
    return {"curves": columns_spec(length, num_hiddens, columns, t("ch06.axis_position", lang)),
            "binary": arrow_table(binary_frame(lang), ""), "periods": arrow_table(period_frame(lang, num_hiddens))}


def binary_table(num_bits=4):
    """Positions 0..2^bits - 1 in binary (most significant bit first) and each bit's flips per step.

    The flip rate counts the steps i -> i + 1 of one full cycle (the last step wraps to 0).
    """
    count = 2**num_bits
    bits = {f"bit {b}": [(i >> b) & 1 for i in range(count)] for b in reversed(range(num_bits))}
    table = pd.DataFrame(bits, index=range(count))
    following = table.shift(-1, fill_value=0)  # (count, bits): the next position, wrapping to 0
    flips = (table != following).mean()  # changes per step
    return table, flips


def binary_frame(lang, num_bits=4):
    """binary_table for display: the bits (as text) with a last row of flip rates."""
    bits, flips = binary_table(num_bits)
    rates = flips.map(lambda v: f"{v:g}").to_frame(t("ch06.flip_rate", lang)).T  # (1, bits)
    table = pd.concat([bits.astype(str).rename(index=str), rates])
    table.columns = [t("ch06.bit_name", lang).format(c.split()[-1]) for c in table.columns]
    return table


def period_frame(lang, num_hiddens):
    """period_table with translated column names."""
    names = {c: t(f"ch06.col_{c}", lang) for c in ("columns", "omega", "period")}
    return period_table(num_hiddens).rename(columns={**names, "j": t("ch06.col_pair", lang)})


def period_table(num_hiddens, pairs=None):
    """For chosen column pairs j (by default a spread of those P has): omega_j and the period 2 pi / omega_j."""
    omega = frequencies(num_hiddens)  # (ceil(d/2),)
    if pairs is None:
        pairs = sorted({j for j in (0, 1, 2, 3, len(omega) // 2, len(omega) - 1) if j < len(omega)})
    elif any(not 0 <= j < len(omega) for j in pairs):
        raise ValueError(f"column pairs must be 0..{len(omega) - 1} for num_hiddens = {num_hiddens}; got {list(pairs)}")
    return pd.DataFrame({"j": pairs, "columns": [f"{2 * j}, {2 * j + 1}" for j in pairs],
                         "omega": [float(omega[j]) for j in pairs],
                         "period": [float(2 * math.pi / omega[j]) for j in pairs]})


def rotation(delta, j, num_hiddens):
    """The 2x2 matrix that moves column pair j of P by delta positions: (2, 2) float64."""
    w = frequencies(num_hiddens)[j]
    c, s = math.cos(delta * w), math.sin(delta * w)
    return np.array([[c, s], [-s, c]])


def rotation_error(length, num_hiddens, delta, table=None):
    """max over pos and j of |R_j(delta) (P[pos,2j], P[pos,2j+1]) - (P[pos+delta,2j], P[pos+delta,2j+1])|."""
    P = sinusoid_table(length, num_hiddens) if table is None else np.asarray(table, dtype=np.float64)
    if not 0 < delta < length:
        raise ValueError(f"delta must be between 1 and length - 1 = {length - 1}; got {delta}")
    worst = 0.0
    for j in range(num_hiddens // 2):
        pairs = P[:, 2 * j : 2 * j + 2]  # (T, 2): (sin, cos) of i omega_j
        moved = pairs[:-delta] @ rotation(delta, j, num_hiddens).T  # (T - delta, 2)
        worst = max(worst, float(np.abs(moved - pairs[delta:]).max()))
    return worst


def rotation_view(length, num_hiddens, delta, j):
    """(R_j(delta) as an Arrow table, error of the float64 table, error of the module's float32 table)."""
    matrix = pd.DataFrame(rotation(delta, j, num_hiddens).round(6), columns=["0", "1"])
    return (arrow_table(matrix), rotation_error(length, num_hiddens, delta),
            rotation_error(length, num_hiddens, delta, module_table(length, num_hiddens)))


def latex_sci(x, digits=2):
    """x in scientific notation for LaTeX: 1.44 \\times 10^{-7}."""
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa} \\times 10^{{{int(exponent)}}}"


FLOAT32_BOUND = (1 + math.sqrt(2)) * 2.0**-24  # rounding of 2 stored entries (mixed by |c|+|s| <= sqrt 2) and 1 target


# --- why scale, and why positions at all ------------------------------------------------------

def scale_norms(num_hiddens, num_tokens=200, seed=0):
    """Measured sizes: embeddings ~ N(0, 1/d) with and without the sqrt(d) scale, against P's rows."""
    gen = torch.Generator().manual_seed(seed)
    E = torch.randn(num_tokens, num_hiddens, generator=gen, dtype=torch.float64) / math.sqrt(num_hiddens)  # (N, d)
    P = torch.from_numpy(sinusoid_table(num_tokens, num_hiddens))  # (N, d)
    scaled = E * math.sqrt(num_hiddens)  # (N, d)

    def same_position_cosine(X):
        """Mean cosine between two different words' inputs (word + P) at the same position."""
        a, b = X[0::2] + P[0::2], X[1::2] + P[0::2]  # (N/2, d) each: two words, same positions
        return float(torch.nn.functional.cosine_similarity(a, b, dim=-1).mean())

    return {
        "embedding": float(E.norm(dim=-1).mean()), "scaled": float(scaled.norm(dim=-1).mean()),
        "position": float(P.norm(dim=-1).mean()),
        "cosine_unscaled": same_position_cosine(E), "cosine_scaled": same_position_cosine(scaled),
    }


def scale_view(lang, num_hiddens):
    """scale_norms as an Arrow (measure, value) table with translated names."""
    norms = scale_norms(num_hiddens)
    return arrow_table(pd.DataFrame({t("ch06.col_measure", lang): [t(f"ch06.measure_{m}", lang) for m in norms],
                                     t("ch06.col_value", lang): [round(v, 4) for v in norms.values()]}))


def permutation(num_tokens, seed):
    """A seeded shuffle of range(num_tokens) as a list."""
    return torch.randperm(num_tokens, generator=torch.Generator().manual_seed(seed)).tolist()


def shuffle_errors(tokens, perm, num_hiddens=32, num_heads=4, seed=0):
    """Self-attention of the sentence and of its shuffle: max |f(X[perm]) - f(X)[perm]| without and with P."""
    layer, perm = build_layer(num_hiddens, num_heads, seed), list(perm)
    X = embed(list(tokens), num_hiddens).unsqueeze(0)  # (1, T, d)
    P = torch.from_numpy(sinusoid_table(len(tokens), num_hiddens)).float().unsqueeze(0)  # (1, T, d)
    errors = {}
    with torch.no_grad():
        for name, add in (("without", 0 * P), ("with", P)):
            out = layer(X + add, X + add, X + add)  # (1, T, d)
            shuffled = X[:, perm] + add  # (1, T, d): the words move, the positions stay
            out_shuffled = layer(shuffled, shuffled, shuffled)  # (1, T, d)
            errors[name] = float((out_shuffled - out[:, perm]).abs().max())
    return errors
