"""Streamlit side of the copy-task and sqrt(d_k) experiments: shipped results first, training on a button press.

The shipped results files are read through st.cache_data (keyed on the file's
path and modification time). A live run trains only in the rerun that the
button press starts, under a progress bar; its results stay in the session, so
later reruns show them without training again.
"""

import time
from pathlib import Path

import streamlit as st

from course.app.ui import current_lang
from course.common.i18n import t

from course.lessons.bottleneck import task as bottleneck_task
from course.lessons.ch03 import scaling_task

LOADERS = {"bottleneck": bottleneck_task.load_results, "scaling": scaling_task.load_results}
FILES = {"bottleneck": bottleneck_task.RESULTS, "scaling": scaling_task.RESULTS}


@st.cache_data(max_entries=8, show_spinner=False)
def _load(kind, path, mtime_ns):
    """A checked results file (cached per file version)."""
    return LOADERS[kind](path)


def shipped(kind):
    """(token, results) of experiment `kind` ("bottleneck" or "scaling"); the token names the file version."""
    path = Path(FILES[kind])
    mtime = path.stat().st_mtime_ns
    return f"shipped:{kind}:{mtime}", _load(kind, str(path), mtime)


def live_run(key, button_label, running_label, train):
    """(token, results) of this session's last live run, or None; train(progress) runs only on a press.

    The token is a plain value naming the run, for caches keyed on plain values.
    """
    store = f"{key}_results"
    if st.button(button_label, key=f"{key}_run"):
        bar = st.progress(0.0, text=running_label)
        started, lang = time.monotonic(), current_lang()

        def show(fraction):
            fraction = min(max(fraction, 0.0), 1.0)
            bar.progress(fraction, text=progress_text(running_label, fraction, time.monotonic() - started, lang))

        results = train(show)
        st.session_state[store] = (f"live:{key}:{time.time_ns()}", results)
        bar.empty()
    return st.session_state.get(store)


def progress_text(label, fraction, elapsed_s, lang):
    """A live run's bar text: the label, the seconds so far and, once some of it is done, an estimate of
    the seconds left (the time so far scaled by the fraction left: the steps take about equally long)."""
    elapsed = f"{elapsed_s:.0f}"
    if fraction < 0.02 or elapsed_s < 1:  # too little done to estimate from
        return t("ui.progress.so_far", lang, label=label, elapsed=elapsed)
    left = elapsed_s * (1 - fraction) / fraction
    return t("ui.progress.eta", lang, label=label, elapsed=elapsed, left=f"{max(left, 1):.0f}")
