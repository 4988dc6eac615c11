"""What the training-lab page shows, in one language: texts with the runs' figures, curve and attention charts.

Pure functions of run dicts (no Streamlit), so the page caches each view on
plain values. Every figure in a text is read from the runs it describes.
"""

import altair as alt
import pandas as pd

from course.common import charts
from course.common.i18n import t
from course.lessons import lab_tasks, training_lab

SERIES_COLOURS = ("#0068c9", "#ff4b4b", "#29b09d")  # baseline, the compared run, the learner's modules
PAD_MARK = "·"  # a padding position of the sentence-pair task
# Total height in px (Streamlit fits title, axes and legend into it): the plot must stay taller than the
# vertical axis title, or Vega pushes the chart's title above the drawing, out of sight.
CURVE_HEIGHT = 360
REACH = 0.9  # "steps to learn": the first greedy test with at least this sequence accuracy


def first_step_reaching(run, level=REACH):
    """The first tested step whose greedy sequence accuracy is at least `level`, or None."""
    return next((x["step"] for x in run["tests"] if x["seq_acc"] >= level), None)


def mean_test_accuracy(run):
    """Mean greedy sequence accuracy over all tests after step 0: how fast and how far it learned."""
    tests = [x["seq_acc"] for x in run["tests"] if x["step"] > 0]
    return sum(tests) / len(tests) if tests else 0.0


def _pct(x):
    return f"{100 * x:.0f}%"


def _reached(run, lang):
    step = first_step_reaching(run)
    return t("lab.never", lang) if step is None else str(step)


def seed_figures(results, task, variant, lang):
    """Text fields for the variant and the baseline on every shipped seed: final accuracy, step to 90%, mean."""
    out = {}
    for name, who in (("baseline", "b"), (variant, "v")):
        runs = [training_lab.find_run(results, task, name, s) for s in results["seeds"]]
        runs = [r for r in runs if r is not None]
        sep = " / "
        out[f"{who}_acc"] = sep.join(_pct(r["final_seq_acc"]) for r in runs)
        out[f"{who}_reach"] = sep.join(_reached(r, lang) for r in runs)
        out[f"{who}_mean"] = sep.join(_pct(mean_test_accuracy(r)) for r in runs)
        out[f"{who}_tok"] = sep.join(_pct(r["final_token_acc"]) for r in runs)
    out["seeds"] = " / ".join(str(s) for s in results["seeds"])
    return out


def reading(results, task, variant, lang):
    """What the shipped runs show for one ablation on one task, with both seeds' figures."""
    c = results["config"]
    fields = seed_figures(results, task, variant, lang)
    pairs = task == training_lab.PAIRS_TASK
    head = t("lab.intro_pairs" if pairs else "lab.intro_figures", lang, steps=c["steps"], batch=c["batch_size"],
             length=c["seq_len"], vocab=c["vocab_size"], reach=_pct(REACH), task=t(f"lab.tasks.{task}", lang), **fields)
    claim = t("lab.pairs_claim", lang) if pairs else t(f"lab.ablations.{variant}.claim", lang)
    return "\n\n".join((t(f"lab.ablations.{variant}.what", lang), head, claim))


def curve_frame(runs, labels, log_every):
    """Long table (series, step, measure, value) of runs: training loss per log window, greedy tests."""
    rows = []
    for run, label in zip(runs, labels):
        rows += [{"series": label, "step": (i + 1) * log_every, "measure": "loss", "value": v}
                 for i, v in enumerate(run["loss"])]
        rows += [{"series": label, "step": x["step"], "measure": "seq_acc", "value": x["seq_acc"]}
                 for x in run["tests"]]
    return pd.DataFrame(rows)


def curve_specs(runs, labels, log_every, lang):
    """Two Vega-Lite dicts: training loss and greedy sequence accuracy against step, one line per run."""
    frame = curve_frame(runs, labels, log_every)
    colour = alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=0),
                       scale=alt.Scale(domain=list(labels), range=list(SERIES_COLOURS[: len(labels)])))
    specs = []
    for measure, log_y in (("loss", True), ("seq_acc", False)):
        data = frame[frame["measure"] == measure]
        chart = charts.line_chart(data, "step", "value", title=t(f"lab.chart.{measure}", lang),
                                  x_title=t("lab.chart.step", lang), y_title=t(f"lab.chart.{measure}_axis", lang),
                                  log_y=log_y, points=measure == "seq_acc", height=CURVE_HEIGHT)
        specs.append(chart.encode(color=colour).to_dict())
    return specs


def snapshot_steps(run):
    """The steps at which the run kept attention maps."""
    return [s["step"] for s in run["snapshots"]]


def nearest_snapshot(run, step):
    """The run's snapshot at `step`, or at the last step before it (a stopped run has fewer)."""
    kept = [s for s in run["snapshots"] if s["step"] <= step]
    return kept[-1] if kept else run["snapshots"][0]


def probe_ids(config, task, pairs=None):
    """(source ids, target ids) of the task's probe; None for the sentence pairs when their slice is absent."""
    lab_config = training_lab.LabConfig(**dict(config, task=task))
    if task == training_lab.PAIRS_TASK and pairs is None:
        return None
    src, tgt = training_lab.task_data(lab_config, pairs).probe()  # (1, T), (1, T)
    return src[0].tolist(), tgt[0].tolist()


def token_text(ids, tokens=None):
    """Ids as shown in a map or a caption: the digits themselves, or the slice's tokens (PAD_MARK for padding)."""
    if tokens is None:
        return [str(x) for x in ids]
    return [PAD_MARK if x == lab_tasks.PAD_ID else tokens[x] if 0 <= x < len(tokens) else "?" for x in ids]


def map_labels(config, task, kind, pairs=None):
    """(row labels, column labels) of a map of `kind` on the probe: input and output symbols.
    Without the sentence-pair slice (never shipped) its maps are labelled by position 1..T."""
    probe = probe_ids(config, task, pairs)
    if probe is None:
        numbers = [str(i + 1) for i in range(config["seq_len"])]
        return numbers, numbers
    tokens = pairs["tokens"] if task == training_lab.PAIRS_TASK else None
    src, tgt = (token_text(ids, tokens) for ids in probe)
    rows = {"encoder": src, "decoder": tgt, "cross": tgt}[kind]
    cols = {"encoder": src, "decoder": ["<s>"] + tgt[:-1], "cross": src}[kind]
    return rows, cols


def attention_spec(run, config, step, kind, layer, head, title, lang, pairs=None):
    """One head's attention map on the probe at (the snapshot nearest before) `step`, as a Vega-Lite dict;
    also the snapshot's step and the model's greedy output on the probe then."""
    snap = nearest_snapshot(run, step)
    layer_maps = snap["maps"][kind][layer]
    head = min(head, len(layer_maps) - 1)  # the one-head model has only head 0
    rows, cols = map_labels(config, run["task"], kind, pairs)
    chart = charts.heatmap(layer_maps[head], rows, cols, title=title, domain=[0, 1],
                           show_values=max(len(rows), len(cols)) <= 12, cell_size=32,
                           x_title=t(f"lab.maps.x_{kind}", lang), y_title=t(f"lab.maps.y_{kind}", lang))
    return chart.to_dict(), snap["step"], snap["prediction"]
