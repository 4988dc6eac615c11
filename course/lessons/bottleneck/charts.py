"""The Bottleneck page's figures: accuracy of the synthetic copy task by length, Tatoeba BLEU by length.

Pure functions of results dicts and tables (no Streamlit); chart builders return
Vega-Lite dicts so the page can cache them.
"""

import altair as alt
import pandas as pd

from course.common import charts
from course.lessons.bottleneck import task

SERIES_COLOURS = ("#0068c9", "#ff4b4b")  # first and second series, the same in every language


def bleu_drop(table):
    """BLEU table (model, bucket, bleu, ...) + drop_pct: percent of the model's first-bucket BLEU lost.

    The first bucket is the first in the table's (the reports') order; a model whose
    first-bucket BLEU is 0 has no drop to show (NaN).
    """
    out = table.copy()
    first = out.groupby("model", sort=False)["bleu"].transform("first")
    out["drop_pct"] = (100 * (1 - out["bleu"] / first.where(first > 0))).round(1)
    return out


def tatoeba_reading(table, fixed="seq2seq", attention="bahdanau"):
    """Figures the reading quotes, or None when the table cannot support them.

    Per model, the drop from the first to the last bucket that every model has;
    the attention model's lead over the fixed one in those two buckets.
    """
    models = list(dict.fromkeys(table["model"]))
    buckets = [b for b in dict.fromkeys(table["bucket"])
               if set(table[table["bucket"] == b]["model"]) == set(models)]
    if fixed not in models or attention not in models or len(buckets) < 2:
        return None
    first, last = buckets[0], buckets[-1]
    bleu = table.set_index(["model", "bucket"])["bleu"]
    if min(bleu[(m, first)] for m in models) <= 0:
        return None
    return {
        "first": first, "last": last,
        "drops": {m: round(100 * (1 - bleu[(m, last)] / bleu[(m, first)]), 1) for m in models},
        "gap_first": round(bleu[(attention, first)] - bleu[(fixed, first)], 1),
        "gap_last": round(bleu[(attention, last)] - bleu[(fixed, last)], 1),
        "count_last": int(table[table["bucket"] == last]["count"].iloc[0]),
    }


def accuracy_frame(results, model_labels):
    """Long table (bucket, model, token_acc, seq_acc) of a bottleneck results dict."""
    rows = []
    for name in task.MODELS:
        for row in results["models"][name]["by_length"]:
            rows.append({"bucket": row["bucket"], "model": model_labels[name],
                         "token_acc": row["token_acc"], "seq_acc": row["seq_acc"]})
    return pd.DataFrame(rows)


def accuracy_spec(results, measure, title, x_title, model_labels, chance_label=None):
    """Lines of one accuracy measure by length bucket, both models; a dashed chance line if labelled."""
    labels = dict(model_labels)
    frame = accuracy_frame(results, labels)
    order = list(dict.fromkeys(frame["bucket"]))
    lines = alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("bucket:O", sort=order, title=x_title, axis=alt.Axis(labelAngle=0)),
        y=alt.Y(f"{measure}:Q", title=None, scale=alt.Scale(domain=[0, 1])),
        color=charts.series_colour("model", [labels[m] for m in task.MODELS], SERIES_COLOURS),
        tooltip=["bucket:O", "model:N", alt.Tooltip(f"{measure}:Q", format=".3f")],
    )
    chart = lines
    if chance_label:
        chance = pd.DataFrame({"chance": [results["chance"]], "label": [chance_label]})
        rule = alt.Chart(chance).mark_rule(strokeDash=[4, 4], color="gray").encode(y="chance:Q")
        text = alt.Chart(chance).mark_text(align="left", dx=4, dy=-6, color="gray").encode(
            y="chance:Q", x=alt.value(0), text="label:N")
        chart = lines + rule + text
    return chart.properties(height=320, title=alt.TitleParams(title, anchor="start")).to_dict()
