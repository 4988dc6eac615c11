"""What the chapters and demo pages show of the trained translators: training curves, a learned alignment.

Streamlit-free. The curves come from each model's BLEU report (`<model>.bleu.json`,
whose `train_metrics` copy the checkpoint's metrics), so drawing them loads no model.
The chapter 4 sentence is picked by a stated rule from the test-set examples that
report already ships (`examples`), so the page never needs the data file.
"""

import numpy as np
import pandas as pd

CURVE_COLUMNS = ["model", "step", "minutes", "valid_loss", "train_loss"]


def valid_curves(reports):
    """Long table (model, step, minutes, valid_loss, train_loss) of every report's loss curve, in report order.

    train_loss is NaN where the run did not record it at that check (runs trained before
    the training command kept it: the shipped checkpoints record it only at the end)."""
    rows = []
    for name, report in reports.items():
        for point in (report.get("train_metrics") or {}).get("valid_curve") or []:
            train = point.get("train_loss")
            rows.append({"model": name, "step": int(point["step"]), "minutes": round(float(point["minutes"]), 2),
                         "valid_loss": round(float(point["valid_loss"]), 4),
                         "train_loss": np.nan if train is None else round(float(train), 4)})
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def both_curves(curves, labels):
    """Long table (model, step, minutes, curve, loss) of the validation and recorded training points.

    labels: {"valid": text, "train": text} naming the two curves; training points that
    were not recorded are left out, so a run without them shows its validation curve only."""
    parts = []
    for kind, column in (("valid", "valid_loss"), ("train", "train_loss")):
        part = curves[["model", "step", "minutes", column]].rename(columns={column: "loss"}).dropna(subset=["loss"])
        parts.append(part.assign(curve=labels[kind]))
    return pd.concat(parts, ignore_index=True)[["model", "step", "minutes", "curve", "loss"]]


def final_losses(reports):
    """Table (model, steps, minutes, train_loss, valid_loss, best_valid_loss) at the end of each run."""
    rows = []
    for name, report in reports.items():
        m = report.get("train_metrics") or {}
        if m.get("valid_loss") is None:
            continue
        curve = [float(p["valid_loss"]) for p in m.get("valid_curve") or []]
        rows.append({"model": name, "steps": int(m.get("steps", 0)), "minutes": round(float(m.get("train_minutes", 0))),
                     "train_loss": None if m.get("train_loss") is None else round(float(m["train_loss"]), 3),
                     "valid_loss": round(float(m["valid_loss"]), 3),
                     "best_valid_loss": round(min(curve), 3) if curve else None})
    return pd.DataFrame(rows, columns=["model", "steps", "minutes", "train_loss", "valid_loss", "best_valid_loss"])


def _plain(text):
    """Text without spaces, for comparing a model's output with the reference."""
    return "".join(str(text).split())


def correct_examples(report, method="greedy"):
    """The report's test-set examples whose `method` output equals the reference exactly, longest English first."""
    found = [ex for bucket in (report or {}).get("examples", {}).values() for ex in bucket
             if ex.get(method) and _plain(ex[method]) == _plain(ex.get("reference", ""))]
    return sorted(found, key=lambda ex: -len(ex["en"].split()))


def picked_example(report, method="greedy"):
    """The rule of chapter 4: the longest shipped test example the model translates exactly right, or None."""
    found = correct_examples(report, method)
    return found[0] if found else None


def top_sources(frame):
    """[(row label, column label with the largest weight, that weight)] for an attention frame."""
    values = frame.to_numpy(dtype=float)  # (rows, cols)
    best = values.argmax(axis=1)  # (rows,)
    return [(str(frame.index[i]), str(frame.columns[j]), float(values[i, j])) for i, j in enumerate(best)]


def monotone_share(frame):
    """Share of consecutive output steps whose most-read source position does not move backwards."""
    best = frame.to_numpy(dtype=float).argmax(axis=1)  # (rows,)
    if len(best) < 2:
        return 1.0
    return float(np.mean(np.diff(best) >= 0))


def step_weights(frame, step):
    """(source unit, weight) table of one output step of an attention frame."""
    if not 0 <= step < len(frame):
        raise ValueError(f"step {step} is outside this translation: it has steps 0..{len(frame) - 1}")
    return pd.DataFrame({"position": range(frame.shape[1]), "source": list(frame.columns),
                         "weight": frame.iloc[step].to_numpy(dtype=float)})
