"""Practice (self-study): every exercise's status, grading in a child process (this Streamlit server's long-lived
grader: course/app/grading_client.shared_server), feedback and solutions."""

import pandas as pd
import streamlit as st

from course.app import grading_client
from course.app.feedback_text import code_names
from course.app.learner import current
from course.app.weights_view import show_weights_diff
from course.app.ui import FAILED_CHECK_ICON, current_lang, status_label, status_of, status_text, tr
from course.common import exercise_index, exercise_variants, paths
from course.common.exercise_index import saved_score
from course.common.i18n import t, t_count

IDS = [ex.id for ex in exercise_index.EXERCISES]
REPORT_KEY = "practice_report"  # last grader report (not a widget)
ERROR_KEY = "practice_error"  # last grader failure message (not a widget)
MAX_FAILED_SHOWN = 8  # more failed checks are counted, not listed


def grade(ex_ids):
    """Run the grader with a progress bar, keep its report in the session, redraw the page."""
    bar = st.progress(0.0, text=tr("practice.running"))

    def on_progress(done, total, ex_id, status):
        text = tr("practice.progress", done=done, total=total, ex_id=ex_id, status=tr("app.status." + status))
        bar.progress(done / max(total, 1), text=text)

    st.session_state.pop(REPORT_KEY, None)
    st.session_state.pop(ERROR_KEY, None)
    try:
        report = grading_client.run_grader(ex_ids, on_progress=on_progress, lang=current_lang(),
                                           server=grading_client.shared_server())
        current().record(report)  # the grader only reports; the Learner records
        st.session_state[REPORT_KEY] = report
    except grading_client.GraderError as err:
        st.session_state[ERROR_KEY] = str(err)
    st.rerun()  # redraw the status table with the new results


def show_exercise_report(entry):
    """One exercise's result: status, score, summary and each check with its hint."""
    head = f"{entry['id']} · {tr('exercises.' + entry['id'] + '.title')} — {status_label(entry['status'])}"
    with st.expander(head, expanded=not entry.get("passed")):
        score, duration = f"{100 * saved_score(entry):.0f}", f"{float(entry.get('duration_s', 0)):.1f}"
        st.markdown(tr("practice.score", score=score, duration=duration))
        if entry.get("summary"):
            st.markdown(code_names(entry["summary"]))
        if entry.get("class_variant_warning"):  # variant 0 passes a file a class variant fails: say it before a class does
            st.warning(code_names(entry["class_variant_warning"]), icon=":material/tune:")
        failed = [check for check in entry["checks"] if not check.get("passed")]
        for index, check in enumerate(failed[:MAX_FAILED_SHOWN]):
            if check.get("message") != entry.get("summary"):  # "not started", a broken file: said once
                name, message = code_names(check.get("name", "")), code_names(check.get("message", ""))
                st.markdown(f"{FAILED_CHECK_ICON} **{name}** — {message}")
            if check.get("weights"):
                show_weights_diff(st, check["weights"], current_lang(), key=f"practice_weights_{entry['id']}_{index}")
            if check.get("hint"):
                st.info(tr("practice.hint", hint=code_names(check["hint"])), icon=":material/lightbulb:")
        if len(failed) > MAX_FAILED_SHOWN:
            st.caption(t_count("practice.more_failed", current_lang(), len(failed) - MAX_FAILED_SHOWN))
        passed = [check.get("name", "") for check in entry["checks"] if check.get("passed")]
        if passed:
            st.caption(t_count("practice.passed_checks", current_lang(), len(passed),
                               names="; ".join(code_names(name) for name in passed)))


def upload_section():
    """Grade an uploaded .py file or notebook for one exercise (in a child process, never imported here)."""
    st.subheader(tr("practice.upload_title"))
    st.caption(tr("practice.upload_help"))
    ex_id = st.selectbox(tr("practice.upload_exercise"), IDS, key="practice_upload_ex",
                         format_func=lambda i, lang=current_lang(): f"{i} · {t('exercises.' + i + '.title', lang)}")
    limit = grading_client.MAX_UPLOAD_MB  # said in the label: Streamlit's own box text is English only
    upload = st.file_uploader(tr("practice.upload_file", limit=limit), type=["py", "ipynb"], key="practice_upload",
                              max_upload_size=limit)
    if upload is None or not st.button(tr("practice.upload_grade", ex_id=ex_id), key="practice_upload_grade"):
        return
    problem = grading_client.upload_problem(ex_id, upload.name, upload.getvalue(), current_lang())
    if problem:
        st.error(tr("practice.upload_rejected", error=problem))
        return
    with st.spinner(tr("practice.running")):
        try:
            upload_report = grading_client.grade_upload(ex_id, upload.name, upload.getvalue(), lang=current_lang(),
                                                        server=grading_client.shared_server())
        except grading_client.GraderError as err:
            st.error(tr("practice.grader_failed", error=str(err)))
            return
    for entry in upload_report["exercises"]:
        show_exercise_report(entry)


st.title(tr("practice.title"))
st.markdown(tr("practice.intro"))

results = current().results()
table = pd.DataFrame(
    {
        tr("practice.col_id"): IDS,
        tr("practice.col_title"): [tr(f"exercises.{i}.title") for i in IDS],
        tr("practice.col_file"): [f"exercises/{exercise_index.get(i).filename}" for i in IDS],
        tr("practice.col_status"): [status_text(status_of(i, results)) for i in IDS],
        tr("practice.col_score"): [f"{100 * saved_score(results[i]):.0f}%" if saved_score(results.get(i)) is not None
                                   else "—" for i in IDS],
    }
)
st.dataframe(table, hide_index=True)

wanted = st.query_params.get("ex")
if wanted in IDS:  # a chapter footer's link chooses its exercise, over an earlier choice, once
    st.session_state["practice_exercise"] = wanted
    del st.query_params["ex"]  # later reruns keep the learner's own choice
chosen = st.selectbox(
    tr("practice.choose"), IDS, key="practice_exercise", persist_state="session",
    format_func=lambda i, lang=current_lang(): f"{i} · {t('exercises.' + i + '.title', lang)}",
)
st.caption(tr(f"exercises.{chosen}.summary"))
if chosen in exercise_variants.PARAMETERS:  # self-study: the published exercise, its parameter's default said
    st.caption(exercise_variants.variant_line(chosen, 0, current_lang()))
st.caption(tr("practice.command", ex_id=chosen))
left, right = st.columns(2)
if left.button(tr("practice.grade_one", ex_id=chosen), key="practice_grade_one", type="primary"):
    grade([chosen])
if right.button(tr("practice.grade_all"), key="practice_grade_all"):
    grade([])

if ERROR_KEY in st.session_state:
    st.error(tr("practice.grader_failed", error=st.session_state[ERROR_KEY]))
report = st.session_state.get(REPORT_KEY)
if report:
    st.subheader(tr("practice.report_title"))
    for entry in report["exercises"]:
        show_exercise_report(entry)

upload_section()

st.subheader(tr("practice.solution_title", ex_id=chosen))
passed = status_of(chosen, current().results()) == "passed"
if passed:
    st.success(tr("practice.solution_unlocked"))
reveal = passed or st.checkbox(tr("practice.solution_confirm"), key=f"practice_reveal_{chosen}", persist_state="session")
if reveal:
    module = exercise_index.get(chosen).module
    source = (paths.PROJECT_ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8")
    st.code(source, language="python")
else:
    st.caption(tr("practice.solution_locked"))
