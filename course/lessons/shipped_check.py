"""The check every shipped results file gets before a page reads it (Streamlit-free)."""


def requirement(label, command):
    """need(cond, where, what): raise ValueError "<label> results: <where> <what>; rerun python -m <command>"
    when cond is false."""
    def need(cond, where, what):
        if not cond:
            raise ValueError(f"{label} results: {where} {what}; rerun python -m {command}")
    return need
