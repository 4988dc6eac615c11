"""Learner-facing sentences for what went wrong: exceptions, imports, crashes, time-outs.

The sandbox reports facts (an exception's type and place, a signal, a time-out);
these functions turn them into one sentence each. Pure functions of plain data.
"""

from .sandbox import SandboxLimits


def summary_line(status, results, failing):
    """One line for the table: how many passed, and the first problem."""
    count = f"{len(results) - len(failing)}/{len(results)} checks passed"
    if status == "passed":
        return count
    if status == "not_written":
        return "not written yet: " + failing[0].message.removeprefix("not written yet: ")
    return f"{count}; first problem: {failing[0].message}"

def error_kind(error):
    """"not_implemented" for a stub still raising NotImplementedError, else "error"."""
    return "not_implemented" if error["kind"] == "not_implemented" else "error"

def _where(error):
    """' (ex03_scoring.py, line 42, in forward: `code`)' or ''."""
    where = error.get("where")
    if not where:
        return ""
    text = f"{where['file']}, line {where['line']}"
    if where.get("function"):
        text += f", in {where['function']}"
    if where.get("code"):
        text += f": `{where['code']}`"
    return f" ({text})"

def error_message(error, memory_mb=SandboxLimits.memory_mb):
    """A learner-facing sentence for an exception raised by their code."""
    kind = error["kind"]
    if kind == "not_implemented":
        what = error["message"] or (error.get("where") or {}).get("function") or "this function"
        return f"not written yet: {what} still raises NotImplementedError"
    if kind == "exit":
        return f"your code called sys.exit({error['message']}){_where(error)}: return a value instead of exiting"
    if kind == "memory":
        return f"ran out of memory{_where(error)}: the sandbox allows {memory_mb} MB"
    return f"raised {error['type']}: {error['message']}{_where(error)}"

def import_message(error, learner_name):
    """Why the learner's module could not be imported."""
    if error["type"] in ("SyntaxError", "IndentationError", "TabError"):
        return f"{learner_name} has a syntax error: {error['message']}{_where(error)}"
    return f"importing {learner_name} failed: {error_message(error)}"

def missing_message(job, limits):
    """Why no result came back for a check."""
    status = job.status
    if status.get("timed_out"):
        return (f"timed out after {limits.timeout_s:g} s while running this check "
                "(an infinite loop, or far too much work?)")
    signal_name = status.get("signal")
    if signal_name == "SIGXFSZ":
        return (f"printed more than {limits.output_kb} KB of output (a print inside a loop?); "
                "the output is capped and the process was stopped")
    if signal_name == "SIGXCPU":
        return f"used more than {limits.timeout_s:g} s of CPU time and was stopped"
    if signal_name == "SIGSEGV":
        return "the process crashed with a segmentation fault (SIGSEGV) while running this check"
    if signal_name == "SIGKILL":
        return "the process was killed (SIGKILL), most likely for using too much memory"
    if signal_name:
        return f"the process was stopped by signal {signal_name} while running this check"
    if "exit_code" in status:
        return (f"the process exited (code {status['exit_code']}) before this check finished: "
                "does the code call sys.exit() or os._exit()?")
    return "no result came back from the sandbox for this check"
