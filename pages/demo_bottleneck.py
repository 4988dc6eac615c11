"""Demo: the fixed-context bottleneck, measured: test BLEU by source length for the three models."""

import streamlit as st

from course.app.demo_ui import model_label, show_missing
from course.app.ui import labeler, tr
from course.common import charts
from course.translation import demos
from course.translation.evaluate import BUCKETS, bucket_label
from course.translation.models import MODEL_NAMES

KEEP = "session"


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


st.title(tr("demos.bottleneck.title"))
st.markdown(tr("demos.bottleneck.intro"))
found = reports(report_stamps())
if not found:
    st.info(tr("demos.bottleneck.no_reports", dir=demos.checkpoint_dir()))
    show_missing(MODEL_NAMES)
    st.stop()
show_missing([n for n in MODEL_NAMES if n not in found])

method = st.radio(tr("demos.bottleneck.method_label"), ("greedy", "beam"), horizontal=True,
                  format_func=labeler("demos.bottleneck.methods.{}"), key="demo_bottleneck_method",
                  persist_state=KEEP)
table = demos.bleu_by_length(found, method)
caption = beam_caption(found) if method == "beam" else None
if caption:
    st.caption(caption)
labels = [bucket_label(lo, hi) for lo, hi in BUCKETS]
shown = table.assign(model=table["model"].map(model_label))
chart = charts.bar_chart(shown, "bucket", "bleu", title=tr("demos.bottleneck.chart_title"),
                         x_title=tr("demos.bottleneck.x_title"), y_title=tr("demos.bottleneck.y_title"),
                         sort=labels, labels=False)
st.altair_chart(chart.encode(xOffset="model:N", color="model:N"), key="demo_bottleneck_chart")
first = next(iter(found.values()))
counts = ", ".join(f"{b}: {first['buckets'][b]['count']}" for b in labels if b in first.get("buckets", {}))
extra = first.get("num_long_extra", 0)
st.caption(tr("demos.bottleneck.counts_caption", counts=counts)
           + (" " + tr("demos.bottleneck.counts_long", extra=extra) if extra else ""))
st.dataframe(table.pivot(index="model", columns="bucket", values="bleu").reindex(columns=labels)
             .rename(index=model_label), key="demo_bottleneck_table")
st.markdown(tr("demos.bottleneck.reading"))

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
st.dataframe(examples.rename(columns={"en": tr("demos.bottleneck.col_en"),
                                      "reference": tr("demos.bottleneck.col_reference"),
                                      **{n: model_label(n) for n in MODEL_NAMES}}),
             hide_index=True, key="demo_bottleneck_examples")
