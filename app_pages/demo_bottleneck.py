"""Demo: the fixed-context bottleneck, measured: Tatoeba BLEU by source length, and a synthetic copy task."""

import streamlit as st

from course.app.chart_view import show_chart
from course.app.demo_ui import model_label, show_missing
from course.app.experiment_ui import live_run, shipped
from course.app.trained_ui import training_curves
from course.app.ui import current_lang, labeler, tr
from course.lessons.bottleneck import task as bottleneck_task
from course.lessons.bottleneck import views as bottleneck_views
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
    edge = demos.alphas_at_edge(found)  # the search stopped at its largest alpha while BLEU still rose
    for alpha in sorted(set(edge.values())):
        models = tr("demos.bottleneck.beam_separator").join(model_label(n) for n, a in edge.items() if a == alpha)
        text += " " + tr("demos.bottleneck.beam_edge", models=models, alpha=f"{alpha:g}")
    return text


@st.cache_data(max_entries=16, show_spinner=False)
def tatoeba_view(stamps, method, lang):
    """BLEU and drop-from-short chart dicts, the BLEU table and its reading, cached on plain values."""
    table = demos.bleu_by_length(reports(stamps), method)
    return bottleneck_views.tatoeba_view(table, [bucket_label(lo, hi) for lo, hi in BUCKETS], lang)


def tatoeba_section(found):
    """BLEU by source length as BLEU and as the drop from short sentences; overall; examples."""
    method = st.radio(tr("demos.bottleneck.method_label"), ("greedy", "beam"), horizontal=True,
                      format_func=labeler("demos.bottleneck.methods.{}"), key="demo_bottleneck_method",
                      persist_state=KEEP)
    specs, bleu, reading = tatoeba_view(report_stamps(), method, current_lang())
    caption = beam_caption(found) if method == "beam" else None
    if caption:
        st.caption(caption)
    labels = [bucket_label(lo, hi) for lo, hi in BUCKETS]
    for col, spec in zip(st.columns(2), specs):
        show_chart(col, spec, width="stretch")
    first = next(iter(found.values()))
    counts = ", ".join(f"{b}: {first['buckets'][b]['count']}" for b in labels if b in first.get("buckets", {}))
    extra = first.get("num_long_extra", 0)
    st.caption(tr("demos.bottleneck.counts_caption", counts=counts)
               + (" " + tr("demos.bottleneck.counts_long", extra=extra) if extra else ""))
    st.dataframe(bleu, key="demo_bottleneck_table")
    st.markdown(reading)
    st.header(tr("demos.bottleneck.overall_header"))
    st.dataframe(bottleneck_views.methods_table(demos.overall_bleu(found), current_lang()),
                 key="demo_bottleneck_overall")
    long_table, long_count, long_words = demos.long_bleu(found)
    if long_count:
        st.subheader(tr("demos.bottleneck.long_header", count=long_count, min_words=long_words))
        st.dataframe(bottleneck_views.methods_table(long_table, current_lang()), key="demo_bottleneck_long")
    st.header(tr("demos.bottleneck.examples_header"))
    bucket = st.select_slider(tr("demos.bottleneck.bucket_label"), labels, value=labels[-1],
                              key="demo_bottleneck_bucket")
    examples = demos.example_sentences(found, bucket, method)
    if not examples.empty:  # st.table wraps long sentences to the page width (a dataframe ran off the right)
        st.table(examples.rename(columns={"en": tr("demos.bottleneck.col_en"),
                                          "reference": tr("demos.bottleneck.col_reference"),
                                          **{n: model_label(n) for n in MODEL_NAMES}})
                 .set_index(tr("demos.bottleneck.col_en")))


@st.cache_data(max_entries=16, show_spinner=False)
def copy_task_view(token, lang, _results):
    """The synthetic experiment's texts and chart dicts, cached on plain values (results token, language)."""
    return bottleneck_views.copy_task_view(_results, lang)


def synthetic_section():
    """The copy task: shipped accuracy by length for both models, and a live run on request."""
    st.header(tr("demos.bottleneck.synthetic.header"))
    token, results = shipped("bottleneck")
    st.markdown(copy_task_view(token, current_lang(), results)["body"])
    seed = st.number_input(tr("demos.bottleneck.synthetic.seed_label"), 0, 9999, results["config"]["seed"],
                           key="demo_bottleneck_seed")
    live = live_run("demo_bottleneck_live", tr("demos.bottleneck.synthetic.run_button"),
                    tr("demos.bottleneck.synthetic.running"),
                    lambda progress: bottleneck_task.run(bottleneck_task.BottleneckConfig(seed=int(seed)), progress))
    token, shown = live or (token, results)
    view = copy_task_view(token, current_lang(), shown)
    st.caption(tr(f"demos.bottleneck.synthetic.{'live' if live else 'shipped'}_caption", seed=view["seed"],
                  seconds=view["seconds"]))
    for col, spec in zip(st.columns(2), view["charts"]):
        show_chart(col, spec, width="stretch")
    st.markdown(tr("demos.bottleneck.synthetic.after"))


st.title(tr("demos.bottleneck.title"))
st.markdown(tr("demos.bottleneck.intro"))
found = reports(report_stamps())
if found:
    show_missing([n for n in MODEL_NAMES if n not in found])
    tatoeba_section(found)
    training_curves(list(found), "demo_bottleneck")
else:
    st.info(tr("demos.bottleneck.no_reports", dir=demos.checkpoint_dir()))
    show_missing(MODEL_NAMES)
synthetic_section()
