"""Streamlit side of the issue-16 experiments: shipped results first, training only on a button press.

The shipped results files are read through st.cache_data (keyed on the file's
path and modification time). A live run trains only in the rerun that the
button press starts, under a progress bar; its results stay in the session, so
later reruns show them without training again.
"""

from pathlib import Path

import streamlit as st

from course.lessons import bottleneck_task, scaling_task

LOADERS = {"bottleneck": bottleneck_task.load_results, "scaling": scaling_task.load_results}
FILES = {"bottleneck": bottleneck_task.RESULTS, "scaling": scaling_task.RESULTS}


@st.cache_data(max_entries=8, show_spinner=False)
def _load(kind, path, mtime_ns):
    """A checked results file (cached per file version)."""
    return LOADERS[kind](path)


def shipped(kind):
    """The shipped results of experiment `kind` ("bottleneck" or "scaling")."""
    path = Path(FILES[kind])
    return _load(kind, str(path), path.stat().st_mtime_ns)


def live_run(key, button_label, running_label, train):
    """The results of this session's last live run (None before one); train(progress) runs on a press."""
    store = f"{key}_results"
    if st.button(button_label, key=f"{key}_run"):
        bar = st.progress(0.0, text=running_label)
        st.session_state[store] = train(lambda fraction: bar.progress(min(max(fraction, 0.0), 1.0),
                                                                      text=running_label))
        bar.empty()
    return st.session_state.get(store)
