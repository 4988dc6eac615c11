"""Figures of the two issue-16 experiments and of Tatoeba BLEU by length, for the pages.

Pure functions of results dicts and tables (no Streamlit): the bottleneck page
reads the synthetic copy task (course.lessons.bottleneck_task) and the BLEU
reports; chapter 3 reads the sqrt(d_k) learning task (course.lessons.scaling_task).
Chart builders return Vega-Lite dicts so the pages can cache them.
"""

import altair as alt
import pandas as pd

from course.lessons import bottleneck_task, scaling_task

SERIES_COLOURS = ("#0068c9", "#ff4b4b")  # first and second series, the same in every language
SCALE_COLOURS = ("#0068c9", "#83c9ff")  # q.k and q.k / sqrt(d), as in chapter 3's sqrt(d) grid


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


def _colour(field, domain, colours=SERIES_COLOURS):
    """A colour encoding with fixed colours per series position (not per label text)."""
    return alt.Color(f"{field}:N", title=None, scale=alt.Scale(domain=list(domain), range=list(colours)),
                     legend=alt.Legend(orient="bottom"))


def accuracy_frame(results, model_labels):
    """Long table (bucket, model, token_acc, seq_acc) of a bottleneck results dict."""
    rows = []
    for name in bottleneck_task.MODELS:
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
        color=_colour("model", [labels[m] for m in bottleneck_task.MODELS]),
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


def loss_frame(results, d, version_labels):
    """Long table (step, version, loss) of the logged loss curves at width d."""
    every = results["config"]["log_every"]
    rows = []
    for version in scaling_task.VERSIONS:
        for i, loss in enumerate(scaling_task.run_of(results, d, version)["loss"]):
            rows.append({"step": (i + 1) * every, "version": version_labels[version], "loss": max(loss, 1e-4)})
    return pd.DataFrame(rows)


def loss_spec(results, d, title, x_title, version_labels):
    """Log-scale loss curves with and without the scale at width d."""
    labels = dict(version_labels)
    return alt.Chart(loss_frame(results, d, labels)).mark_line().encode(
        x=alt.X("step:Q", title=x_title),
        y=alt.Y("loss:Q", title=None, scale=alt.Scale(type="log")),
        color=_colour("version", [labels[v] for v in ("unscaled", "scaled")], SCALE_COLOURS),
        tooltip=["step:Q", "version:N", alt.Tooltip("loss:Q", format=".4f")],
    ).properties(height=320, title=alt.TitleParams(title, anchor="start")).to_dict()


def loss_by_width_spec(results, step, title, version_labels):
    """Log-scale loss after `step` steps against d, with and without the scale."""
    labels = dict(version_labels)
    frame = pd.DataFrame([{"d": r["d"], "version": labels[r["version"]],
                           "loss": max(scaling_task.loss_after(results, r["d"], r["version"], step), 1e-4)}
                          for r in results["runs"]])
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("d:Q", title="d", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("loss:Q", title=None, scale=alt.Scale(type="log")),
        color=_colour("version", [labels[v] for v in ("unscaled", "scaled")], SCALE_COLOURS),
        tooltip=["d:Q", "version:N", alt.Tooltip("loss:Q", format=".4f")],
    ).properties(height=320, title=alt.TitleParams(title, anchor="start")).to_dict()


def probe_steps(config, probe=100):
    """(step whose loss the page compares across widths, steps of the table): logged steps of the run."""
    every, steps = config["log_every"], config["steps"]
    last = steps - steps % every
    probe = min(probe, last)
    half = max(every, probe // 2 - probe // 2 % every)
    return probe, sorted({half, probe, last})


def scaling_table(results, steps, labels):
    """Table per (d, version): loss after each of `steps`, final accuracy, gradients at initialisation."""
    rows = []
    for r in results["runs"]:
        g = r["gradients_at_init"]
        row = {labels["d"]: r["d"], labels["version"]: labels[r["version"]]}
        row.update({labels["loss_at"].format(step=s): scaling_task.loss_after(results, r["d"], r["version"], s)
                    for s in steps})
        row.update({labels["accuracy"]: r["accuracy"], labels["grad_scores"]: round(g["scores"], 3),
                    labels["grad_query"]: round(g["query"], 3), labels["grad_W_q"]: round(g["W_q"], 3),
                    labels["max_weight"]: round(g["max_weight"], 2)})
        rows.append(row)
    return pd.DataFrame(rows)
