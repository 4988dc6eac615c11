"""Class-mode page sections: submitting, live queue state, feedback, history, gradebook, analytics.

Each function draws one part of a page and reads data only through
classroom.web.access with the signed-in user's id.
"""

import secrets
import time

import altair as alt
import pandas as pd
import streamlit as st

from course.app import ui
from course.app.ui import current_lang, tr
from course.common import exercise_variants
from course.common.i18n import t, t_count
from course.common.paths import PROJECT_ROOT

from . import access, web
from ..analytics import analytics
from ..line import eta, live
from ..data import exercise_table
from .feedback import feedback_text, mistake_labels
from ..data.submissions import MAX_SOURCE_BYTES
from ..data.text_rules import visible_code

LIVE_KEY = "class_live_submission"  # the submission whose state is followed (not a widget)
SHOW_KEY = "class_show_submission"  # a submission to select in the history (not a widget)
LIVE_SINCE_KEY = "class_live_since"  # when it was acknowledged (time.monotonic(); not a widget)


def status_text(status):
    """A verdict or queue state in the page's language, as a plain word (table cells draw no Markdown icons)."""
    if status in ("queued", "grading"):
        return tr(f"classroom.status_{status}")
    return ui.status_text(status)


def exercise_label():
    lang = current_lang()
    return lambda ex_id: f"{ex_id} · {t('exercises.' + ex_id + '.title', lang)}"


CODE_FONT = """<style>[class*="st-key-practice_class_code_"] textarea {
  font-family: "Source Code Pro", ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
}</style>"""  # the class code box: code is read in a monospace font


def show_variant(user, ex_id):
    """The learner's exercise variant and the value(s) to write as defaults, where the exercise has one."""
    if ex_id not in exercise_variants.PARAMETERS:
        return
    try:
        number = access.own_variant(web.store(), user.id, ex_id)
    except Exception:  # a database fault: the submit button says it; the text stays out
        return
    st.info(exercise_variants.variant_line(ex_id, number, current_lang()), icon=":material/tune:")


def submit_form(user):
    """Exercise choice, code box (the exercise stub to start from) or upload, the submit button, and what the page
    said of the last click: the submission's id, or that it was not taken and why.

    Box and uploader are the chosen exercise's own (an upload never follows the
    learner to another exercise); when a file is uploaded the page says it, not
    the box, is what Submit sends.

    A click is taken by the button's callback (`_clicked`), which runs when the click's run starts, before the page
    is drawn: it keeps what was clicked in the session (CLICK_KEY). The submit itself runs below, in the page's
    run, and what it said stays shown (SAID_KEY) until the next click. Drawn only in the click's own run, the
    answer was gone with the next run: the verdict's (the live fragment reruns the page once the submission is
    graded) or another click's, so under load with a worker grading, 13 of 20 acknowledgements were drawn for a
    moment and never readable (tests/test_classroom_submit_clicks.py). Read from the button's return value, a click
    also depended on the run that carried it reaching the button; now a click the page has not submitted when a run
    is cut short is submitted by the next run, and a click handled already (the same drawn button:
    CLICK_TOKEN_KEY) is not sent twice.
    """
    ex_id = st.selectbox(tr("classroom.choose"), exercise_table.EXERCISE_IDS, key="practice_class_ex",
                         format_func=exercise_label())
    stub = (PROJECT_ROOT / "exercises" / exercise_table.get(ex_id).filename).read_text(encoding="utf-8")
    show_variant(user, ex_id)
    own_arrangements(user, ex_id)
    st.html(CODE_FONT)
    st.text_area(tr("classroom.code_label", ex_id=ex_id), stub, height=320, key=f"practice_class_code_{ex_id}")
    upload = _uploader(ex_id)
    if upload is not None:
        st.info(tr("classroom.upload_wins", ex_id=ex_id), icon=":material/upload_file:")
        st.text(upload.name)  # plain text: a file name is never Markdown
    token = st.session_state.setdefault(CLICK_TOKEN_KEY, secrets.token_hex(8))
    st.button(tr("classroom.submit", ex_id=ex_id), key="practice_class_submit", type="primary",
              on_click=_clicked, args=(ex_id, stub, token))
    _submit_click(user)
    said = st.session_state.get(SAID_KEY)
    if said is not None:
        (st.success if said[0] == "received" else st.error)(said[1])


UPLOAD_SEEN_MB = 64  # the largest upload the page sees (the uploader refuses a larger one itself, in its own words)


def _uploader(ex_id):
    """The exercise's uploader -> its file (None without one, or when the file was too big to submit).

    A file over the 1 MB a submission may be (submissions.MAX_SOURCE_BYTES) is let go at once (the uploader is drawn
    anew) and the page says so, and Submit sends nothing until the learner uploads another file or forgets this
    one (a button). Were the uploader to refuse it in the browser (Streamlit's limit), the page would not know,
    and Submit would send the code box: after a 50 MB file was refused, the exercise's stub was "received"."""
    fresh_key, refused_key = f"class_upload_fresh_{ex_id}", f"class_upload_refused_{ex_id}"
    fresh = st.session_state.get(fresh_key, 0)
    upload = st.file_uploader(tr("classroom.upload_label"), type=["py", "ipynb"], max_upload_size=UPLOAD_SEEN_MB,
                              key=f"practice_class_upload_{ex_id}" + (f"_{fresh}" if fresh else ""))
    st.caption(tr("classroom.upload_limit"))
    if upload is not None and upload.size > MAX_SOURCE_BYTES:
        st.session_state[refused_key] = tr("classroom.upload_too_big", mb=f"{upload.size / 1e6:.1f}",
                                           limit=MAX_SOURCE_BYTES // 1_000_000)  # (no file name: Markdown)
        st.session_state[fresh_key] = fresh + 1  # a new uploader: the server lets the file go
        st.rerun()
    if upload is not None:
        st.session_state.pop(refused_key, None)
    elif st.session_state.get(refused_key):
        st.error(tr("classroom.refused", reason=st.session_state[refused_key]), icon=":material/block:")
        st.button(tr("classroom.upload_forget"), key=f"practice_class_upload_forget_{ex_id}",
                  on_click=st.session_state.pop, args=(refused_key, None))
    return upload


CLICK_KEY = "class_submit_click"  # a Submit click not submitted yet: (exercise, data, file name) (not a widget)
CLICK_TOKEN_KEY = "class_submit_token"  # the token of the Submit button drawn; a new one once it is clicked
SAID_KEY = "class_submit_said"  # what the page said of the last click: ("received" or "refused", the words)


def _clicked(ex_id, stub, token):
    """The Submit button's callback: keep what it sends, the uploaded file or else the code box (CLICK_KEY), unless
    this drawn button's click was taken already (`token`: a click replayed into a later run)."""
    if token != st.session_state.get(CLICK_TOKEN_KEY):
        return
    st.session_state[CLICK_TOKEN_KEY] = secrets.token_hex(8)
    st.session_state.pop(SAID_KEY, None)
    fresh = st.session_state.get(f"class_upload_fresh_{ex_id}", 0)
    upload = st.session_state.get(f"practice_class_upload_{ex_id}" + (f"_{fresh}" if fresh else ""))
    refused = st.session_state.get(f"class_upload_refused_{ex_id}")
    if refused and upload is None:  # the file chosen was too big: nothing is sent
        st.session_state[SAID_KEY] = ("refused", tr("classroom.refused", reason=refused))
    elif upload is not None:
        st.session_state[CLICK_KEY] = (ex_id, upload.getvalue(), upload.name)
    else:
        st.session_state[CLICK_KEY] = (ex_id, st.session_state.get(f"practice_class_code_{ex_id}", stub),
                                       exercise_table.get(ex_id).filename)


def _submit_click(user):
    """Submit the click kept by `_clicked`, if any, and keep what to say of it (SAID_KEY). Taking the click and
    submitting it draw nothing, so a run is never cut short between them (a run stops at a drawing call)."""
    click = st.session_state.pop(CLICK_KEY, None)
    if click is None:
        return
    ex_id, data, name = click
    try:  # a database fault (read-only, full, unreachable) says "Not submitted": nothing was stored
        with web.unavailable_says("classroom.db_unavailable"):
            submission_id = access.submit(web.store(), user.id, ex_id, data, name, lang=current_lang())
    except (access.AccessDenied, ValueError) as err:  # SubmitRefused is a ValueError
        st.session_state[SAID_KEY] = ("refused", tr("classroom.refused", reason=str(err)))
        return
    st.session_state[LIVE_KEY] = submission_id
    st.session_state[LIVE_SINCE_KEY] = time.monotonic()
    st.session_state[SAID_KEY] = ("received", tr("classroom.submitted", id=submission_id))


def just_graded(detail):
    """The verdict of the submission the page followed, under the submit button."""
    st.subheader(tr("classroom.feedback_title", id=detail["id"]))
    feedback(detail)


@st.fragment(run_every=live.POLL_S)
def live_state(user_id):
    """'queued (position N) / grading / graded' of the followed submission with its wait forecast (classroom/line/eta.py),
    from the app's shared live snapshot (classroom/line/live.py: one read for every open page); a change shows within a
    second.

    Once graded, the verdict is read (that one submission) and drawn here at once, then the whole page runs
    again for the history, which selects it and shows its feedback: from that run on it is drawn there only
    (once on the page), not here as well."""
    submission_id = st.session_state.get(LIVE_KEY)
    if submission_id is None:  # graded: the history below shows it
        return
    now = live.state_of(web.store(), user_id, submission_id, st.session_state.get(LIVE_SINCE_KEY))
    if now.state in ("queued", "running"):
        if now.state == "queued":
            st.info(tr("classroom.state_queued", position=now.position), icon=":material/hourglass_top:")
        else:
            st.info(tr("classroom.state_running"), icon=":material/sync:")
        st.caption(eta.sentence(now.position, now.start_s, now.finish_s, current_lang()))
        if now.set_aside:  # its first run passed the exercise's normal time: it runs again, after the others
            st.caption(tr("classroom.state_set_aside"))
        if now.delayed:  # no live worker, or its lease lapsed
            st.warning(tr("classroom.grading_delayed"), icon=":material/warning:")
    else:
        st.session_state.pop(LIVE_KEY, None)
        just_graded(access.submission_detail(web.store(), user_id, submission_id))
        st.session_state[SHOW_KEY] = submission_id  # selected in the history once the page redraws
        st.rerun()  # the whole page: the history includes the new verdict


def show_code(source, language="python"):
    """Code as staff and learners see it: bidi controls and zero-width characters marked (text_rules.visible_code),
    with a warning saying how many there are."""
    text, marked = visible_code(source)
    if marked:
        st.warning(tr("classroom.invisible_marked", count=marked), icon=":material/visibility:")
    st.code(text, language=language)


def feedback(detail):
    """The newest verdict of a submission, worded exactly as the command line words it."""
    if not detail["results"]:
        return
    result = detail["results"][-1]
    st.markdown(tr("classroom.score", score=f"{100 * result['score']:.0f}"))
    if detail["late"]:
        st.caption(tr("classroom.late", penalty=f"{100 * detail['penalty']:.0f}"))
    text = feedback_text(result["report"]) or result["summary"]
    if text:  # lines wrapped: a block that scrolls sideways is one a keyboard cannot scroll (axe: serious)
        st.code(visible_code(text)[0], language=None, wrap_lines=True)


def history(user_id, owner_id=None, key="practice_class"):
    """A table of submissions and, per submission, its code and feedback."""
    store = web.store()
    frame = access.history(store, user_id, user_id=owner_id)
    if frame.empty:
        st.caption(tr("classroom.history_empty"))
        return
    table = pd.DataFrame({
        tr("classroom.col_id"): frame["submission_id"],
        tr("classroom.col_exercise"): frame["exercise_id"],
        tr("classroom.col_when"): frame["created_at"].dt.strftime("%Y-%m-%d %H:%M"),
        tr("classroom.col_status"): frame["status"].fillna(frame["submission_status"]).map(status_text),
        tr("classroom.col_score"): frame["score"].map(lambda s: "—" if pd.isna(s) else f"{100 * s:.0f}%"),
        tr("classroom.col_late"): frame["late"].map({True: "✓", False: ""}),
    })
    st.dataframe(table, hide_index=True, key=f"{key}_history")
    options = frame["submission_id"].tolist()
    if st.session_state.get(SHOW_KEY) in options:
        st.session_state[f"{key}_pick"] = st.session_state.pop(SHOW_KEY)
    chosen = st.selectbox(tr("classroom.col_id"), options, key=f"{key}_pick")
    detail = access.submission_detail(store, user_id, chosen)
    st.subheader(tr("classroom.feedback_title", id=chosen))
    feedback(detail)
    with st.expander(tr("classroom.show_code", id=chosen)):
        show_code(detail["source"], "python" if detail["kind"] == ".py" else "json")


def gradebook_table(user_id):
    """The gradebook with a filter, sortable columns and a CSV download -> the shown frame."""
    book = access.gradebook(web.store(), user_id)
    if book.empty:
        st.info(tr("classroom.no_learners"))
        return book
    needle = st.text_input(tr("classroom.filter"), key="class_gradebook_filter").strip().lower()
    if needle:
        book = book[book["email"].str.lower().str.contains(needle, regex=False)
                    | book["name"].str.lower().str.contains(needle, regex=False)]
    view = analytics.gradebook_view(book, exercise_table.EXERCISE_IDS)  # percentages and a total; the CSV has it all
    percents = [*exercise_table.EXERCISE_IDS, "total"]
    styled = view.style.format("{:.0f}%", subset=percents, na_rep="—")  # "—": no submission
    marked = analytics.marked_cells(book, exercise_table.EXERCISE_IDS)
    for (ex_id, overridden, extended), rows in marked.items():  # the shown text only: a column still sorts by score
        marks = "".join(f" · {tr(key)}" for key, on in (("classroom.mark_override", overridden),
                                                         ("classroom.mark_extended", extended)) if on)
        styled = styled.format(lambda value, marks=marks: f"{value:.0f}%{marks}", subset=(rows, [ex_id]),
                               na_rep=f"—{marks}")
    st.dataframe(styled, hide_index=True,
                 column_config={"total": tr("classroom.col_total"), "removed": st.column_config.CheckboxColumn(
                     tr("classroom.col_removed"))}, key="class_gradebook_table")
    if marked:
        st.caption(tr("classroom.gradebook_marks"))
    st.download_button(tr("classroom.download"), analytics.gradebook_csv(book),
                       file_name="grades.csv", mime="text/csv", key="class_gradebook_csv")
    return book


def adjustments_table(user_id):
    """The extensions and score overrides in force, with who granted them and why (staff only)."""
    st.subheader(tr("classroom.adjustments_title"))
    frame = access.class_adjustments(web.store(), user_id)
    if frame.empty:
        st.caption(tr("classroom.adjustments_none"))
        return
    st.dataframe(pd.DataFrame({
        "email": frame["email"],
        tr("classroom.col_exercise"): frame["exercise_id"],
        tr("classroom.col_extended_until"): frame["extended_until"].dt.strftime("%Y-%m-%d %H:%M"),
        tr("classroom.col_extension_reason"): frame["extension_reason"],
        tr("classroom.col_extension_by"): frame["extension_by"],
        tr("classroom.col_override"): frame["override"].map(lambda s: None if pd.isna(s) else f"{100 * s:.0f}%"),
        tr("classroom.col_override_reason"): frame["override_reason"],
        tr("classroom.col_override_by"): frame["override_by"],
    }), hide_index=True, key="class_gradebook_adjustments")


def own_arrangements(user, ex_id):
    """The learner's own deadline of an exercise (their extension's, where they have one) and any score staff set
    for it, under the exercise choice."""
    try:
        class_deadline, own, override = access.own_arrangements(web.store(), user.id, ex_id)
    except Exception:  # a database fault: the submit button says it; the lines stay out
        return
    if own is not None and own != class_deadline:
        st.info(tr("classroom.own_deadline_extended", ex_id=ex_id, when=f"{own:%Y-%m-%d %H:%M}",
                   class_when=f"{class_deadline:%Y-%m-%d %H:%M}"), icon=":material/event_available:")
    elif own is not None:
        st.caption(tr("classroom.own_deadline", ex_id=ex_id, when=f"{own:%Y-%m-%d %H:%M}"))
    if override is not None:
        st.info(tr("classroom.own_override", ex_id=ex_id, score=f"{100 * override:.0f}"), icon=":material/edit_note:")


def summary_table(frame):
    """Per exercise: learners, passed, pass rate, median attempts to pass."""
    summary = analytics.exercise_summary(frame, exercise_table.EXERCISE_IDS)
    st.dataframe(pd.DataFrame({
        tr("classroom.col_exercise"): summary["exercise_id"],
        tr("classroom.col_learners"): summary["learners"],
        tr("classroom.col_passed"): summary["passed"],
        tr("classroom.col_pass_rate"): summary["pass_rate"].map(lambda r: "—" if pd.isna(r) else f"{r:.0%}"),
        tr("classroom.col_median"): summary["median_attempts_to_pass"].map(lambda m: "—" if pd.isna(m) else f"{m:g}"),
    }), hide_index=True, key="class_analytics_summary")


def mistake_chart(user_id, frame, ex_id):
    """The bar chart of the mistakes (known or found automatically) of one exercise; a clicked bar lists its
    submissions."""
    ids = {m for found in frame.loc[frame["exercise_id"] == ex_id, "mistake_ids"] for m in found}
    bars = analytics.mistake_bars(frame, ex_id, mistake_labels(ex_id, current_lang(), ids))
    st.subheader(tr("classroom.mistakes_title", ex_id=ex_id))
    if bars.empty:
        st.caption(tr("classroom.no_mistakes", ex_id=ex_id))
        return
    failing = analytics.failing_learners(frame, ex_id)
    st.caption(t_count("classroom.mistakes_counting", current_lang(), failing, failing=failing, ex_id=ex_id))
    for _, bar in bars.head(3).iterrows():
        st.markdown("- " + tr("classroom.mistake_sentence", share=f"{bar['learner_share']:.0%}", ex_id=ex_id,
                              learners=bar["learners"], failing=failing, label=bar["label"]))
    pick = alt.selection_point(fields=["mistake_id"], name="bar")
    chart = alt.Chart(bars.drop(columns=["submission_ids"])).mark_bar().encode(
        x=alt.X("learner_share:Q", axis=alt.Axis(format="%"), title=tr("classroom.bar_share")),
        y=alt.Y("mistake_id:N", sort="-x", title=tr("classroom.bar_mistake")),
        tooltip=["mistake_id", "label", "learners", "count", alt.Tooltip("learner_share:Q", format=".0%")],
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.5)),
    ).add_params(pick)
    event = st.altair_chart(chart.properties(description=tr("classroom.mistakes_title", ex_id=ex_id)),
                            on_select="rerun", key=f"class_analytics_chart_{ex_id}")
    with st.expander(t("charts.table", current_lang(), title=tr("classroom.mistakes_title", ex_id=ex_id)),
                     key=f"class_analytics_table_{ex_id}"):  # the chart's numbers, for keyboard and screen readers
        st.table(bars.assign(learner_share=bars["learner_share"].map("{:.0%}".format))[
            ["label", "learners", "learner_share", "count"]].rename(
            columns={"label": tr("classroom.bar_mistake"), "learners": tr("classroom.col_learners"),
                     "learner_share": tr("classroom.bar_share"), "count": tr("classroom.col_count")}))
    clicked = [p.get("mistake_id") for p in (event.selection.get("bar") or [])] if event else []
    options = bars["mistake_id"].tolist()
    chosen = st.selectbox(tr("classroom.pick_bar"), options, key=f"class_analytics_pick_{ex_id}",
                          index=options.index(clicked[0]) if clicked and clicked[0] in options else 0)
    ids = bars.set_index("mistake_id").loc[chosen, "submission_ids"]
    st.markdown(tr("classroom.behind_bar", ids=", ".join(map(str, ids))))
    shown = st.selectbox(tr("classroom.col_id"), ids, key=f"class_analytics_sub_{ex_id}")
    detail = access.submission_detail(web.store(), user_id, shown)
    feedback(detail)
    with st.expander(tr("classroom.show_code", id=shown)):
        show_code(detail["source"])
