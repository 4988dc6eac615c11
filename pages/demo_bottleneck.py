"""Demo: the fixed-context bottleneck, measured: Tatoeba BLEU by source length, and a synthetic copy task."""

import altair as alt
import streamlit as st

from course.app.demo_ui import model_label, show_missing
from course.app.experiment_ui import live_run, shipped
from course.app.ui import labeler, tr
from course.common import charts
from course.lessons import bottleneck_task, experiment_charts
from course.translation import demos
from course.translation.evaluate import BUCKETS, bucket_label
from course.translation.models import MODEL_NAMES

KEEP = "session"
accuracy_spec = st.cache_data(max_entries=64, show_spinner=False)(experiment_charts.accuracy_spec)


@st.cache_data(show_spinner=False)
def reports(stamps):
    """{model: BLEU report} of the models whose report exists (stamps key the cache on the files)."""
    found = {name: demos.read_bleu_report(name) for name, _ in stamps}
    return {name: report for name, report in found.items() if report is not None}


def report_stamps():
    """(model, modification time) of each existing BLEU report."""
    return tuple((name, demos.bleu_path(name).stat().st_mtime_ns)
                 for name in MODEL_NAMES if demos.bleu_path(name).is_file())


def beam_caption(found):
    """Each model's beam size and length-penalty alpha in words, or None if no report ran beam search."""
    settings = demos.beam_settings(found)
    if not settings:
        return None
    text = tr("demos.bottleneck.beam_note", settings=tr("demos.bottleneck.beam_separator").join(
        tr("demos.bottleneck.beam_setting", model=model_label(n), size=k, alpha=f"{a:g}")
        for n, (k, a, _) in settings.items()))
    if all(chosen for _, _, chosen in settings.values()):
        text += " " + tr("demos.bottleneck.beam_chosen")
    return text


def reading(table):
    """The reading of the BLEU table, with the figures it quotes computed from the table."""
    f = experiment_charts.tatoeba_reading(table)
    if f is None:
        return tr("demos.bottleneck.reading_pointer")
    drops = tr("demos.bottleneck.reading_separator").join(f"{model_label(m)} {d:.0f}%" for m, d in f["drops"].items())
    verdict = "reading_gap_wider" if f["gap_last"] > f["gap_first"] else "reading_gap_not_wider"
    return "\n\n".join((tr("demos.bottleneck.reading", first=f["first"], last=f["last"], drops=drops,
                             count=f["count_last"], gap_first=f"{f['gap_first']:.1f}",
                             gap_last=f"{f['gap_last']:.1f}"),
                          tr(f"demos.bottleneck.{verdict}"), tr("demos.bottleneck.reading_pointer")))


def tatoeba_section(found):
    """BLEU by source length as BLEU and as the drop from short sentences; overall; examples."""
    method = st.radio(tr("demos.bottleneck.method_label"), ("greedy", "beam"), horizontal=True,
                      format_func=labeler("demos.bottleneck.methods.{}"), key="demo_bottleneck_method",
                      persist_state=KEEP)
    table = experiment_charts.bleu_drop(demos.bleu_by_length(found, method))
    caption = beam_caption(found) if method == "beam" else None
    if caption:
        st.caption(caption)
    labels = [bucket_label(lo, hi) for lo, hi in BUCKETS]
    shown = table.assign(model=table["model"].map(model_label))
    left, right = st.columns(2)
    for col, field, title, y_title in ((left, "bleu", "chart_title", "y_title"),
                                       (right, "drop_pct", "drop_title", "drop_y_title")):
        chart = charts.bar_chart(shown, "bucket", field, title=tr(f"demos.bottleneck.{title}"),
                                 x_title=tr("demos.bottleneck.x_title"), y_title=tr(f"demos.bottleneck.{y_title}"),
                                 sort=labels, labels=False)
        col.altair_chart(chart.encode(xOffset="model:N", color=alt.Color("model:N", title=None, legend=alt.Legend(
            orient="bottom"))), key=f"demo_bottleneck_chart_{field}")
    first = next(iter(found.values()))
    counts = ", ".join(f"{b}: {first['buckets'][b]['count']}" for b in labels if b in first.get("buckets", {}))
    extra = first.get("num_long_extra", 0)
    st.caption(tr("demos.bottleneck.counts_caption", counts=counts)
               + (" " + tr("demos.bottleneck.counts_long", extra=extra) if extra else ""))
    st.dataframe(table.pivot(index="model", columns="bucket", values="bleu").reindex(columns=labels)
                 .rename(index=model_label), key="demo_bottleneck_table")
    st.markdown(reading(table))
    st.header(tr("demos.bottleneck.overall_header"))
    st.dataframe(demos.overall_bleu(found).rename(index=model_label), key="demo_bottleneck_overall")
    long_table, long_count, long_words = demos.long_bleu(found)
    if long_count:
        st.subheader(tr("demos.bottleneck.long_header", count=long_count, min_words=long_words))
        st.dataframe(long_table.rename(index=model_label), key="demo_bottleneck_long")
    st.header(tr("demos.bottleneck.examples_header"))
    bucket = st.select_slider(tr("demos.bottleneck.bucket_label"), labels, value=labels[-1],
                              key="demo_bottleneck_bucket")
    examples = demos.example_sentences(found, bucket, method)
    if not examples.empty:  # st.table wraps long sentences to the page width (a dataframe ran off the right)
        st.table(examples.rename(columns={"en": tr("demos.bottleneck.col_en"),
                                          "reference": tr("demos.bottleneck.col_reference"),
                                          **{n: model_label(n) for n in MODEL_NAMES}})
                 .set_index(tr("demos.bottleneck.col_en")))


def synthetic_section():
    """The copy task: shipped accuracy by length for both models, and a live run on request."""
    st.header(tr("demos.bottleneck.synthetic.header"))
    results = shipped("bottleneck")
    m, c = results["models"], results["config"]
    st.markdown(tr("demos.bottleneck.synthetic.body", vocab=c["vocab_size"], min_len=c["min_len"],
                   max_len=c["max_len"], params_fixed=m["fixed"]["parameters"],
                   params_attention=m["attention"]["parameters"], h_fixed=m["fixed"]["num_hiddens"],
                   h_attention=m["attention"]["num_hiddens"], steps=c["steps"], batch=c["batch_size"],
                   per_length=c["eval_per_length"]))
    seed = st.number_input(tr("demos.bottleneck.synthetic.seed_label"), 0, 9999, c["seed"],
                           key="demo_bottleneck_seed")
    live = live_run("demo_bottleneck_live", tr("demos.bottleneck.synthetic.run_button"),
                    tr("demos.bottleneck.synthetic.running"),
                    lambda progress: bottleneck_task.run(bottleneck_task.BottleneckConfig(seed=int(seed)), progress))
    shown = live or results
    which = "live_caption" if live else "shipped_caption"
    st.caption(tr(f"demos.bottleneck.synthetic.{which}", seed=shown["config"]["seed"],
                  seconds=f"{sum(x['train_seconds'] for x in shown['models'].values()):.0f}"))
    names = tuple((n, tr(f"demos.bottleneck.synthetic.model_{n}")) for n in bottleneck_task.MODELS)
    cols = st.columns(2)
    for col, measure in zip(cols, ("token_acc", "seq_acc")):
        col.vega_lite_chart(accuracy_spec(shown, measure, tr(f"demos.bottleneck.synthetic.{measure}"),
                                          tr("demos.bottleneck.synthetic.x_title"), names,
                                          tr("demos.bottleneck.synthetic.chance")), width="stretch")
    st.markdown(tr("demos.bottleneck.synthetic.after"))


st.title(tr("demos.bottleneck.title"))
st.markdown(tr("demos.bottleneck.intro"))
found = reports(report_stamps())
if found:
    show_missing([n for n in MODEL_NAMES if n not in found])
    tatoeba_section(found)
else:
    st.info(tr("demos.bottleneck.no_reports", dir=demos.checkpoint_dir()))
    show_missing(MODEL_NAMES)
synthetic_section()
