"""The trained translators inside the chapters: training curves, a multi-head model's heads, a learned alignment.

Streamlit sections used by chapters 4, 5 and 7 and the demo pages. Models and
translations come from demo_ui (cached per checkpoint file); the numbers from
course.translation.trained_views and demos. A section whose checkpoint is
missing says so and shows the command that trains it, never an error.
"""

import pandas as pd
import streamlit as st

from course.common import pages_index
from course.app.chart_view import show_chart
from course.app.demo_ui import attention_heatmap, model_label, show_missing, translation
from course.app.ui import current_lang, labeler, tr
from course.common import charts
from course.common.arrow import arrow_table
from course.common.i18n import t
from course.translation import demos, trained_views
from course.translation.models import families_with

KEEP = "session"  # persist_state: widget values survive page switches
HEADS_SENTENCE = "i have two brothers."  # one of demos.EXAMPLE_SENTENCES: every shipped model gets it right
WALK_SENTENCES = ("I love AI.", "I love music.")  # the walk-through: an unknown word, then a known one


def _report_stamps(names):
    """((name, mtime_ns) ...) of the BLEU reports that exist: a cache key that changes when one is rewritten."""
    return tuple((n, demos.bleu_path(n).stat().st_mtime_ns) for n in names if demos.bleu_path(n).is_file())


@st.cache_data(max_entries=16, show_spinner=False)
def _curves_view(stamps, lang):
    """(chart dict or None, final-loss table as Arrow) of the reports behind `stamps`."""
    reports = {name: demos.read_bleu_report(name) for name, _ in stamps}
    spec, table = curves_view({name: r for name, r in reports.items() if r}, lang)
    return spec, arrow_table(table)


def curves_view(reports, lang):
    """(chart dict or None, final-loss table) of {model name: BLEU report}: validation curves, and
    training curves (dashed) where the runs recorded them."""
    curves = trained_views.valid_curves(reports)
    curves["model"] = [t(f"demos.models.{n}", lang) for n in curves["model"]]
    spec = None
    if len(curves) and curves["train_loss"].notna().any():  # runs that recorded the training loss at each check
        both = trained_views.both_curves(curves, {k: t(f"trained.curves.kind_{k}", lang) for k in ("valid", "train")})
        spec = charts.line_chart(both, "minutes", "loss", color="model", points=True, stroke_dash="curve",
                                 title=t("trained.curves.title_both", lang), x_title=t("trained.curves.x", lang),
                                 y_title=t("trained.curves.y_both", lang), color_title=t("trained.curves.model", lang)
                                 ).to_dict()
        spec["encoding"]["strokeDash"]["legend"] = {"title": None, "orient": "bottom"}
    elif len(curves):
        spec = charts.line_chart(curves.drop(columns="train_loss"), "minutes", "valid_loss", color="model",
                                 points=True, title=t("trained.curves.title", lang), x_title=t("trained.curves.x", lang),
                                 y_title=t("trained.curves.y", lang), color_title=t("trained.curves.model", lang)
                                 ).to_dict()
    if spec is not None:
        spec["encoding"]["color"]["legend"] = {"orient": "bottom", "labelLimit": 400}  # long model names, whole
    table = trained_views.final_losses(reports)
    table["model"] = [t(f"demos.models.{n}", lang) for n in table["model"]]
    return spec, table.rename(columns={c: t(f"trained.curves.col_{c}", lang) for c in table.columns})


def training_curves(names, key):
    """Each checkpoint's validation-loss curve and its final training and validation loss."""
    stamps = _report_stamps(names)
    if not stamps:
        return
    st.subheader(tr("trained.curves.header"))
    spec, table = _curves_view(stamps, current_lang())
    if spec is not None:
        show_chart(st, spec, width="stretch", key=f"{key}_curves")
    st.dataframe(table, hide_index=True, key=f"{key}_losses")
    st.caption(tr("trained.curves.caption"))


def demo_links(*keys):
    """Links to demo pages, by their pages_index key."""
    for key in keys:
        entry = pages_index.get(key)
        st.page_link(entry.path, label=tr(f"trained.links.{key}"), icon=":material/arrow_forward:")


def _available(name):
    """True when the checkpoint exists; otherwise a note and its training command."""
    if name in demos.available_models():
        return True
    st.info(tr("trained.needs", model=model_label(name)))
    show_missing([name])
    return False


def heads_model():
    """The model the heads sections show: the first registered family whose translations carry every head's
    maps (attention_maps "heads")."""
    return families_with("heads")[0]


@st.cache_data(max_entries=64, show_spinner=False)
def _head_spec(name, stamp, sentence, kind, layer, head, lang):
    """(heatmap dict, 'row → most-read column' text) of one attention map of model `name` (head None: mean over
    heads); stamp: its checkpoint's, so that a retrained model is drawn again."""
    result = translation(name, sentence)
    if head is None:
        heads = result.cross_attention_heads.shape[1]
        values = sum(demos.head_matrix(result, kind, layer, h)[0] for h in range(heads)) / heads
        _, rows, cols = demos.head_matrix(result, kind, layer, 0)
        title = t("trained.transformer.mean_title", lang, kind=t(f"demos.inside.kinds.{kind}", lang), layer=layer + 1)
    else:
        values, rows, cols = demos.head_matrix(result, kind, layer, head)
        title = t("trained.transformer.head_title", lang, head=head + 1)
    frame = pd.DataFrame(values, index=rows, columns=cols)
    tops = ", ".join(f"{row} → {col}" for row, col, _ in trained_views.top_sources(frame))
    return attention_heatmap(frame, title, t("demos.inside.key_title", lang), t("demos.inside.query_title", lang)), tops


@st.cache_data(max_entries=64, show_spinner=False)
def _output_shape(name, stamp, sentence):
    """(model `name`'s output text for `sentence`, its layers, its heads): what the heads sections show of the
    Translation itself (a cached Translation is unpickled on every rerun, attention tensors and all); stamp: the
    checkpoint's, so that a retrained model is read again."""
    result = translation(name, sentence)
    layers, heads = result.cross_attention_heads.shape[:2]
    return result.text, int(layers), int(heads)


def heads_side_by_side(key, name=None):
    """Chapter 5: a trained multi-head model's heads of one layer side by side, on one sentence (default:
    heads_model())."""
    name = name or heads_model()
    st.header(tr("trained.heads.header"))
    st.markdown(tr("trained.heads.body"))
    if not _available(name):
        return
    left, mid, right = st.columns(3)
    sentence = left.selectbox(tr("trained.sentence_label"), demos.EXAMPLE_SENTENCES,
                              index=demos.EXAMPLE_SENTENCES.index(HEADS_SENTENCE), key=f"{key}_sentence")
    text, layers, heads = _output_shape(name, demos.checkpoint_stamp(name), sentence)
    kind = mid.radio(tr("demos.inside.kind_label"), ("cross", "encoder"), key=f"{key}_kind",
                     format_func=labeler("demos.inside.kinds.{}"), persist_state=KEEP)
    layer = right.select_slider(tr("demos.inside.layer_label"), range(1, layers + 1), layers, key=f"{key}_layer",
                                persist_state=KEEP)
    st.markdown(tr("trained.heads.output", text=text))
    stamp = demos.checkpoint_stamp(name)
    for start in range(0, heads, 2):
        for col, head in zip(st.columns(2), range(start, min(start + 2, heads))):
            spec, tops = _head_spec(name, stamp, sentence, kind, layer - 1, head, current_lang())
            show_chart(col, spec, key=f"{key}_head_{head}")
            col.caption(tr("trained.heads.tops", tops=tops))
    st.markdown(tr("trained.heads.after"))
    demo_links("demo_inside")


def attention_kinds(key, name=None):
    """Chapter 7: a trained multi-head model's three kinds of attention (mean over heads), its curve, the links
    (default: heads_model())."""
    name = name or heads_model()
    st.header(tr("trained.transformer.header"))
    st.markdown(tr("trained.transformer.body"))
    if not _available(name):
        return
    left, mid, right = st.columns(3)
    sentence = left.selectbox(tr("trained.sentence_label"), demos.EXAMPLE_SENTENCES,
                              index=demos.EXAMPLE_SENTENCES.index(HEADS_SENTENCE), key=f"{key}_sentence")
    text, layers, _ = _output_shape(name, demos.checkpoint_stamp(name), sentence)
    kind = mid.radio(tr("demos.inside.kind_label"), ("encoder", "decoder", "cross"), index=2, key=f"{key}_kind",
                     format_func=labeler("demos.inside.kinds.{}"), persist_state=KEEP)
    layer = right.select_slider(tr("demos.inside.layer_label"), range(1, layers + 1), layers, key=f"{key}_layer",
                                persist_state=KEEP)
    st.markdown(tr("trained.heads.output", text=text))
    spec, tops = _head_spec(name, demos.checkpoint_stamp(name), sentence, kind, layer - 1, None, current_lang())
    show_chart(st, spec, key=f"{key}_heatmap")
    st.caption(tr(f"demos.inside.captions.{kind}") + " " + tr("trained.heads.tops", tops=tops))
    st.markdown(tr("trained.transformer.after"))
    training_curves([name], key)
    demo_links("demo_inside", "demo_translate")


@st.cache_data(max_entries=8, show_spinner=False)
def _alignment_view(stamp, report_stamp, lang):
    """The chapter 4 rule applied: (example dict, the model's output text, heatmap dict, top sources, monotone
    share) or None when no example fits (the text, not the Translation: a cached value is unpickled on every
    rerun, and the Translation carries its attention tensors)."""
    example = trained_views.picked_example(demos.read_bleu_report("bahdanau"))
    if example is None:
        return None
    result = translation("bahdanau", example["en"])
    frame = demos.cross_attention_frame(result)
    spec = attention_heatmap(frame, t("trained.alignment.title", lang, sentence=example["en"]),
                             t("trained.alignment.x", lang), t("trained.alignment.y", lang))
    return example, result.text, spec, trained_views.top_sources(frame), trained_views.monotone_share(frame)


def learned_alignment(key):
    """Chapter 4: the Bahdanau model's alignment of a test sentence it translates right, picked by a stated rule."""
    st.subheader(tr("trained.alignment.header"))
    st.markdown(tr("trained.alignment.rule"))
    if not _available("bahdanau"):
        return
    stamps = _report_stamps(["bahdanau"])
    view = _alignment_view(demos.checkpoint_stamp("bahdanau"), stamps, current_lang()) if stamps else None
    if view is None:
        st.info(tr("trained.alignment.none"))
        return
    example, text, spec, tops, monotone = view
    st.markdown(tr("trained.alignment.sentence", en=example["en"], reference=example["reference"], output=text))
    if "".join(text.split()) != "".join(example["reference"].split()):
        st.warning(tr("trained.alignment.differs"))
    show_chart(st, spec, key=f"{key}_heatmap")
    st.caption(tr("trained.alignment.caption", tops=", ".join(f"{row} → {col} ({w:.2f})" for row, col, w in tops),
                  monotone=f"{100 * monotone:.0f}"))
    st.markdown(tr("trained.alignment.after"))


@st.cache_data(max_entries=16, show_spinner=False)
def _walk_sentence(stamp, sentence):
    """What the walk-through shows of one sentence whatever the step: (the output text, the source tokens, the
    last step's index, the path of most-read sources); stamp: the checkpoint's, so that a retrained model is read
    again. Keyed by plain values: the page reruns on every move of the step slider."""
    result = translation("bahdanau", sentence)
    frame = demos.cross_attention_frame(result)
    path = " → ".join(f"{r} ({c})" for r, c, _ in trained_views.top_sources(frame))
    return result.text, list(frame.columns), len(frame) - 1, path


@st.cache_data(max_entries=64, show_spinner=False)
def _walk_step(stamp, sentence, step, x_title, y_title):
    """One decoder step of the walk-through: (the token written, the most-read source and its weight, the bar
    chart's dict of the step's weights over the source positions)."""
    frame = demos.cross_attention_frame(translation("bahdanau", sentence))
    row = trained_views.step_weights(frame, step)
    top = row.loc[row["weight"].idxmax()]
    labels = [f"{i} {s}" for i, s in zip(row["position"], row["source"])]
    spec = charts.bar_chart(row.assign(label=labels), "label", "weight", x_title=x_title, y_title=y_title,
                            label_format=".2f").to_dict()
    return frame.index[step], top["source"], float(top["weight"]), spec


def walk_through(key):
    """Chapter 4: one decoder step at a time, the trained Bahdanau model's weights over the source."""
    st.subheader(tr("trained.walk.header"))
    st.markdown(tr("trained.walk.body"))
    if not _available("bahdanau"):
        return
    left, right = st.columns(2)
    sentence = left.radio(tr("trained.sentence_label"), WALK_SENTENCES, key=f"{key}_sentence", horizontal=True,
                          persist_state=KEEP)
    stamp = demos.checkpoint_stamp("bahdanau")
    text, sources, last, path = _walk_sentence(stamp, sentence)
    step = right.slider(tr("trained.walk.step_label"), 0, last, 0, key=f"{key}_step")
    step = min(step, last)
    written, top_source, top_weight, spec = _walk_step(stamp, sentence, step, tr("trained.alignment.x"),
                                                       tr("demos.translate.value_title"))
    st.markdown(tr("trained.walk.output", text=text, source=" ".join(f"`{s}`" for s in sources)))
    st.metric(tr("trained.walk.metric", step=step, token=written), f"{top_source} · {top_weight:.2f}")
    show_chart(st, spec, key=f"{key}_bars")
    st.markdown(tr("trained.walk.after", path=path))
    demo_links("demo_decoding")  # how the tokenizer cuts AI into a / ##i, step by step
