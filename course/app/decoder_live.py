"""The decoder-only chapters' live run: a button trains the chapter's recipe in a child process (the training
lab's, course.app.lab_runner), with a progress bar and a stop button.

Streamlit widgets only. Every widget and session key starts with the page's key (`ch14_`); a finished run,
with its weights, goes to st.session_state[f"{key}_run"], where the page reads it.
"""

import streamlit as st

from course.app import lab_runner
from course.app.learner import LabRefused, current
from course.app.ui import current_lang, tr


def live_section(key, config):
    """The button, or the progress and stop button of a run in training; reruns itself every second while the
    child trains."""
    training = st.session_state.get(f"{key}_live") is not None
    st.fragment(run_every=1.0 if training else None)(live_body)(key, config)


def start(key, config):
    """Start the child if the mode allows one now (a class caps the runs its server trains at once); rerun."""
    try:
        st.session_state[f"{key}_slot"] = current().start_lab_run(lab_runner.TIMEOUT_S, current_lang())
        st.session_state[f"{key}_live"] = lab_runner.start(config, "live")
    except LabRefused as refused:
        st.session_state[f"{key}_error"] = str(refused)
    except (lab_runner.LabRunError, OSError) as err:
        st.session_state[f"{key}_error"] = str(err)
        ended(key)
    st.rerun()


def ended(key):
    """The live run has ended (collected or failed): its place among the class's runs is free."""
    current().end_lab_run(st.session_state.pop(f"{key}_slot", None))


def live_body(key, config):
    """Train on a button; progress bar and stop button while the child runs; collect its run when it ends."""
    live = st.session_state.get(f"{key}_live")
    if live is None:
        if st.session_state.get(f"{key}_error"):
            st.error(st.session_state[f"{key}_error"])
        if st.button(tr(f"{key}.live.button", steps=config.steps, seed=config.seed), key=f"{key}_train"):
            st.session_state[f"{key}_error"] = None
            start(key, config)
        return
    try:
        run = lab_runner.result(live)
    except lab_runner.LabRunError as err:
        st.session_state[f"{key}_live"], st.session_state[f"{key}_error"] = None, str(err)
        ended(key)
        st.rerun()
    if run is not None:
        st.session_state[f"{key}_live"] = None
        ended(key)
        st.session_state[f"{key}_run"] = run
        st.rerun()
    done = lab_runner.progress(live) or {"step": 0, "steps": 1}
    st.progress(done["step"] / done["steps"], text=tr(f"{key}.live.running", step=done["step"], steps=done["steps"]))
    if st.button(tr(f"{key}.live.stop"), key=f"{key}_stop"):
        lab_runner.request_stop(live)
