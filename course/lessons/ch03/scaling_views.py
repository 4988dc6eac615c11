"""Chapter 3's sqrt(d_k) learning experiment as the page shows it: loss charts, the table, the texts.

Pure functions of a results dict of course.lessons.ch03.scaling_task (no Streamlit), so the page
caches a whole view in one st.cache_data call keyed on plain values. Chart builders return
Vega-Lite dicts; every figure in a text is read from the results it describes.
"""

import altair as alt
import pandas as pd

from course.common import charts
from course.common.i18n import t
from course.lessons.ch03 import scaling_task

SCALE_COLOURS = ("#0068c9", "#83c9ff")  # q.k and q.k / sqrt(d), as in chapter 3's sqrt(d) grid
GRADIENT_MEASURES = ("scores", "query", "W_q", "max_weight")
TABLE_COLUMNS = ("d", "version", "loss_at", "accuracy", "grad_scores", "grad_query", "grad_W_q", "max_weight")


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
        color=charts.series_colour("version", [labels[v] for v in ("unscaled", "scaled")], SCALE_COLOURS),
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
        color=charts.series_colour("version", [labels[v] for v in ("unscaled", "scaled")], SCALE_COLOURS),
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


def learning_intro(results, lang):
    """Chapter 3's learning experiment before a width is chosen: the widths trained and the body text."""
    c = results["config"]
    return {"widths": sorted({r["d"] for r in results["runs"]}),
            "body": t("ch03.learn.body", lang, pairs=c["num_pairs"], keys=c["num_keys"], values=c["num_values"],
                      steps=c["steps"], batch=c["batch_size"])}


def learning_view(results, d, lang):
    """Chapter 3's learning experiment at width d: charts, summary, gradient text, table, training time."""
    c = results["config"]
    widths = sorted({r["d"] for r in results["runs"]})
    versions = tuple((v, t(f"ch03.col_{v}", lang)) for v in scaling_task.VERSIONS)
    probe, table_steps = probe_steps(c)
    loss = lambda width, v: scaling_task.loss_after(results, width, v, probe)  # noqa: E731
    u_best_d = min(widths, key=lambda width: loss(width, "unscaled"))
    peak = lambda width: scaling_task.run_of(results, width, "unscaled")["gradients_at_init"]["max_weight"]  # noqa: E731
    last, last_scaled = (scaling_task.run_of(results, widths[-1], v) for v in ("unscaled", "scaled"))
    g = {v[0]: scaling_task.run_of(results, d, v)["gradients_at_init"] for v in scaling_task.VERSIONS}
    names = {k: t(f"ch03.learn.col_{k}", lang) for k in TABLE_COLUMNS}
    names.update(dict(versions))
    return {
        "curve": loss_spec(results, d, t("ch03.learn.curve_title", lang, d=d),
                                             t("ch03.learn.step", lang), versions),
        "by_width": loss_by_width_spec(results, probe, t("ch03.learn.width_title", lang, step=probe),
                                                         versions),
        "summary": t("ch03.learn.summary", lang, d0=widths[0], d1=widths[-1], probe=probe, steps=c["steps"],
                     s0=loss(widths[0], "scaled"), s1=loss(widths[-1], "scaled"), u0=loss(widths[0], "unscaled"),
                     u1=loss(widths[-1], "unscaled"), u_final=last["loss"][-1],
                     u_best_d=u_best_d, u_best=loss(u_best_d, "unscaled"),
                     acc=f"{100 * last['accuracy']:.1f}", acc_s=f"{100 * last_scaled['accuracy']:.1f}"),
        "gradients": t("ch03.learn.gradients", lang, d=d, d0=widths[0], d1=widths[-1],
                       peak_first=f"{peak(widths[0]):.3f}", peak_last=f"{peak(widths[-1]):.3f}",
                       **{f"{m}_{v}": f"{g[v][m]:.3f}" for v in g for m in GRADIENT_MEASURES}),
        "table": scaling_table(results, table_steps, names),
        "seconds": f"{sum(r['seconds'] for r in results['runs']):.0f}",
    }
