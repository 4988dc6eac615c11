"""The training lab's live part: buttons that train in a child process, a progress bar and a stop button.

Streamlit widgets only; the child processes are course.app.lab_runner's. A finished
run goes to st.session_state["lab_runs"][(task, variant, seed)], where the page
reads it (variant "mine" for the baseline built from the learner's modules).
"""

import tempfile
from dataclasses import replace
from pathlib import Path

import streamlit as st

from course.app import lab_runner
from course.app.learner import LabRefused, current
from course.app.ui import current_lang, tr
from course.lessons import training_lab


def live_section(task, variant, seed):
    """The live run's part of the page; while a child trains it reruns itself every second."""
    training = st.session_state.get("lab_live") is not None
    st.fragment(run_every=1.0 if training else None)(live_body)(task, variant, seed)


def start(task, variant, seed, learner=None):
    """Start a live run in a child (the learner's modules when `learner` holds their results), if the mode's rules
    allow one now (a class caps the runs its server trains at once: the Learner says); rerun."""
    config = replace(training_lab.variant_config(variant), task=task, seed=seed)
    try:
        st.session_state["lab_slot"] = current().start_lab_run(lab_runner.TIMEOUT_S, current_lang())
        with tempfile.TemporaryDirectory(prefix="attention-lab-own-") as own:
            mode = {}  # where the learner's modules are, and whether they run confined: the Learner says
            if learner is not None:
                folder = current().stage_own_modules(Path(own))
                mode = {"exercises_dir": folder} if folder is not None else {}
                mode.update({"confine": True} if current().confines_own_modules else {})
            st.session_state["lab_live"] = lab_runner.start(config, variant, learner, **mode)
    except LabRefused as refused:
        st.session_state["lab_error"] = str(refused)
    except (lab_runner.LabRunError, OSError) as err:  # OSError: the learner's files could not be staged
        st.session_state["lab_error"] = str(err)
        ended()
    st.rerun()


def ended():
    """The live run has ended (collected or failed): its place among the class's runs is free."""
    current().end_lab_run(st.session_state.pop("lab_slot", None))


def live_body(task, variant, seed):
    """Train the chosen variant, or the baseline with the learner's modules, in a child process on a button;
    progress bar and stop button while it runs."""
    live = st.session_state.get("lab_live")
    if live is None:
        if st.session_state.get("lab_error"):
            st.error(st.session_state["lab_error"])
        if st.button(tr("lab.train_button", variant=tr(f"lab.variants.{variant}"), seed=seed), key="lab_train"):
            st.session_state["lab_error"] = None
            start(task, variant, seed)
        mine = current().own_modules()  # self-study: the files as they stand now; a class: its verdicts
        body, not_passed = current().own_modules_texts(current_lang())
        st.markdown(body)
        if not lab_runner.learner_ready(mine):
            st.info(not_passed)
        elif st.button(tr("lab.mine_button", seed=seed), key="lab_train_mine"):
            st.session_state["lab_error"] = None
            start(task, "baseline", seed, learner=mine)
        return
    try:
        run = lab_runner.result(live)
    except lab_runner.LabRunError as err:
        st.session_state["lab_live"], st.session_state["lab_error"] = None, str(err)
        ended()
        st.rerun()
    if run is not None:
        st.session_state["lab_live"] = None
        ended()
        st.session_state.setdefault("lab_runs", {})[live.label] = run
        st.rerun()
    done = lab_runner.progress(live) or {"step": 0, "steps": 1}
    st.progress(done["step"] / done["steps"], text=tr("lab.running", step=done["step"], steps=done["steps"]))
    if st.button(tr("lab.stop_button"), key="lab_stop"):
        lab_runner.request_stop(live)
