"""Demo: the trained weights in models built from the learner's own modules, beside the reference."""

import streamlit as st

from course.app import demo_runner, progress
from course.app.chart_view import show_chart
from course.app.demo_ui import attention_heatmap, sentence_input, show_missing, translation
from course.app.ui import labeler, tr
from course.translation import demos
from course.translation.models import family

KEEP = "session"
OUTPUT_KEY = "demo_mine_output"  # session state: the last run {(model, sentence): result or error}


def show_side(column, side, header, text, frame):
    """One side of the comparison: the Chinese output and its cross-attention."""
    column.subheader(header)
    column.markdown(f"**{text or '∅'}**")
    if frame is not None:
        show_chart(column, attention_heatmap(frame, "", tr("demos.translate.x_title"),
                                             tr("demos.translate.y_title")), key=f"demo_mine_chart_{side}")


def run(name, sentence, results):
    """Translate with the learner's modules in a child process; keep the result in the session."""
    try:
        data = demo_runner.run_learner(name, sentence, results=results)
        st.session_state[OUTPUT_KEY] = {(name, sentence): {"ok": data}}
    except demo_runner.RunnerError as err:
        st.session_state[OUTPUT_KEY] = {(name, sentence): {"error": str(err)}}


st.title(tr("demos.mine.title"))
st.markdown(tr("demos.mine.intro"))
names = [n for n in demos.available_models() if n in demos.learner_models()]
if not names:
    st.info(tr("demos.mine.no_models"))
    show_missing([n for n in demos.learner_models() if n not in names])
    st.stop()
name = st.radio(tr("demos.mine.model_label"), names, format_func=labeler("demos.models.{}"),
                horizontal=True, key="demo_mine_model", persist_state=KEEP)
results = progress.load_newest()  # the files as they stand now
if not demo_runner.can_run(name, results):
    st.info(tr("demos.mine.not_passed", exercises=" / ".join(family(name).exercises)))
    st.stop()
chosen = demo_runner.learner_modules(name, results)
mine = [m for m, source in chosen.items() if source == "learner"]
st.caption(tr("demos.mine.modules_caption", mine=", ".join(mine) or tr("demos.mine.none"),
              reference=", ".join(m for m in chosen if m not in mine) or tr("demos.mine.none")))
sentence = sentence_input("demo_mine_sentence")
if sentence is None:
    st.stop()
if st.button(tr("demos.mine.run_button"), key="demo_mine_run", type="primary"):
    with st.spinner():
        run(name, sentence, results)
outcome = st.session_state.get(OUTPUT_KEY, {}).get((name, sentence))
reference = translation(name, sentence)
left, right = st.columns(2)
show_side(left, "reference", tr("demos.mine.reference_header"), reference.text, demos.cross_attention_frame(reference))
if outcome is None:
    right.info(tr("demos.mine.press_run"))
elif "error" in outcome:
    right.warning(tr("demos.mine.failed", error=outcome["error"]))
else:
    learner = outcome["ok"]
    show_side(right, "yours", tr("demos.mine.yours_header"), learner["text"], demos.learner_attention_frame(learner))
    identical, diff = demos.compare_with_reference(reference, learner)
    if identical:
        st.success(tr("demos.mine.identical", tol=f"{demos.ATTENTION_TOL:g}"))
    else:
        st.warning(tr("demos.mine.differs", diff=f"{diff:.3g}"))
