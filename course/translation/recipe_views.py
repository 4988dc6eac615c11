"""What chapter 7 shows of the training recipe and the head study, in one language: tables and chart dicts.

Streamlit-free; the page caches each view on plain values.
"""

from course.common import charts
from course.common.i18n import t

from . import head_study, recipe
from .checkpoint import read_checkpoint

SMOOTHING_CLASSES = 5  # the small example's classes; the right one is class 1
SMOOTHING_COLUMNS = ("class", "one_hot", "smoothed", "confident", "hedged")


def shipped_recipe(path):
    """The checkpoint's recipe (recipe.recipe_of) read from the file at `path`, or None when the checkpoint
    does not record its training settings and step count (one saved outside the training command)."""
    payload = read_checkpoint(path)
    train, metrics = payload.get("train") or {}, payload.get("metrics") or {}
    if any(key not in train for key in recipe.RECIPE_KEYS) or "steps" not in metrics:
        return None
    return recipe.recipe_of(train, metrics)


def schedule_spec(lr, warmup, steps, lang):
    """Line chart dict of the learning rate against the step for `warmup` warm-up steps."""
    frame = recipe.schedule_frame(lr, warmup, steps)
    return charts.line_chart(frame, "step", "lr", title=t("ch07.recipe.chart_title", lang, warmup=warmup),
                             x_title=t("ch07.recipe.x", lang), y_title=t("ch07.recipe.y", lang)).to_dict()


def smoothing_view(epsilon, lang):
    """The smoothing example's table with its column names in `lang` (numbers rounded to 4 places)."""
    table = recipe.smoothing_table(SMOOTHING_CLASSES, epsilon).round(4)
    return table.rename(columns={c: t(f"ch07.recipe.col_{c}", lang) for c in SMOOTHING_COLUMNS})


def _kind_layer(kind, layer, lang):
    return t("ch07.inside.row", lang, kind=t(f"demos.inside.kinds.{kind}", lang), layer=layer)


def gradient_view(found, lang):
    """One table per layer and kind: largest weight and score gradient, trained and fresh, W_v's gradient, and
    the largest weight of a fresh model with N(0, 1/d) embeddings where the study has it."""
    trained, fresh = found["gradients"], found["fresh_gradients"]
    out = trained[["kind", "layer", "largest", "scores", "W_v"]].copy()
    out["fresh_largest"], out["fresh_scores"] = fresh["largest"].to_numpy(), fresh["scores"].to_numpy()
    largest = ["largest", "fresh_largest"]
    if "fresh_unit_saturation" in found:  # a study written before this column lacks it
        out["fresh_unit_largest"] = found["fresh_unit_saturation"]["largest"].to_numpy()
        largest.append("fresh_unit_largest")
    out.insert(0, "where", [_kind_layer(k, n, lang) for k, n in zip(out["kind"], out["layer"])])
    out = out.drop(columns=["kind", "layer"])
    out[largest] = out[largest].round(3)
    for c in ("scores", "fresh_scores", "W_v"):
        out[c] = [f"{v:.2g}" for v in out[c]]
    return out.rename(columns={c: t(f"ch07.inside.col_{c}", lang) for c in out.columns})


def bos_view(found, lang):
    """The <bos> table with its column names in `lang`."""
    out = found["bos"].round(3)
    return out.rename(columns={c: t(f"ch07.inside.col_{c}", lang) for c in out.columns})


def ablation_spec(found, lang):
    """Heatmap dict: the loss change when one head is masked, rows kind and layer, columns heads."""
    table = found["ablation"]
    rows = list(dict.fromkeys(zip(table["kind"], table["layer"])))
    heads = sorted(set(table["head"]))
    values = [[float(table[(table["kind"] == k) & (table["layer"] == n) & (table["head"] == h)]["d_loss"].iloc[0])
               for h in heads] for k, n in rows]
    labels = [t("ch07.inside.short_row", lang, kind=t(f"ch07.inside.short.{k}", lang), layer=n) for k, n in rows]
    reach = max(abs(v) for row in values for v in row) or 1.0  # a symmetric scale: 0 sits in the middle
    return charts.heatmap(values, labels, [t("ch07.inside.head", lang, head=h) for h in heads],
                          t("ch07.inside.ablation_title", lang), show_values=True, value_format=".3f", cell_size=44,
                          x_title=t("ch07.inside.ablation_x", lang), y_title=t("ch07.inside.ablation_y", lang),
                          scheme="redblue", domain=[-reach, reach]).to_dict()


def shipped_study():
    """The head study shipped beside the checkpoint, or None."""
    return head_study.load_shipped()
