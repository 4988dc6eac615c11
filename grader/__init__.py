"""The autograder: `python -m grader` grades exercises/ against solutions/.

Public entry points (the CLI in grader/cli.py prints a Report as a table or
JSON and saves the learner's progress; the class server calls the API):

    grade(target, ex_ids=None, limits=None, on_progress=None, sources=None, on_ran=None,
          sandbox=None, references_for_dependencies=None) -> Report
    grade_submissions(submissions, limits=None, on_progress=None, on_ran=None,
                      sandbox=None, references_for_dependencies=None) -> [ExerciseResult]
    Submission(ex_id, source, name, label=None, dependencies=None)
    SandboxLimits(timeout_s=20, memory_mb=2048, output_kb=512, parallel=2, mode="process",
                  processes=64, files_mb=64, uid_base=1_750_000_000, uid_count=1000)
    strict_problem() -> None, or why strict mode cannot run here (what to install)

- `sandbox`: "process" (default; self-study) or "strict" (hosted: each exercise
  in its own bubblewrap sandbox as its own uid; needs root, bubblewrap and
  setpriv). Overrides `limits.mode`.
- `references_for_dependencies`: default True in process mode (ex05 is graded
  with the reference ex01/ex03, so one bug is reported once) and False in
  strict mode, where True is refused (ValueError): there a job for ex05 gets
  the learner's own ex01/ex03, from `Submission.dependencies`
  ({"ex01": source, "ex03": source}: the caller passes only sources that
  passed), or else from the submissions of the same call (each must pass in
  it). A missing or failing one makes the verdict "pass ex03 first ..."
  (status "blocked") without running the learner's code. `grade()` adds the
  exercises the requested ones build on, graded but not reported.
- A sandbox server that dies or hangs makes every exercise it had not
  finished an "error" result saying so; only a strict mode that cannot run
  at all raises (RuntimeError with strict_problem()'s sentence).
- One call runs `limits.parallel` jobs at a time; several calls may run at
  once (a worker's concurrency): each job claims its own uid.
"""

_PUBLIC = {"Submission": "core", "grade": "core", "grade_submissions": "core", "Report": "report",
           "SandboxLimits": "sandbox", "strict_problem": "sandbox"}
__all__ = sorted(_PUBLIC)


def __getattr__(name):
    """The public names, imported on first use: `python -m grader` starts its sandbox before torch is imported."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'grader' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
