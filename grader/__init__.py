"""The autograder: `python -m grader` grades exercises/ against solutions/.

The learner runs `python -m grader` (grader/cli.py prints a Report as a table or JSON and saves the learner's
progress) or, in a notebook, `grader.notebooks.grade_in_notebook`. Other code imports the module it uses;
this package's __init__ imports nothing, so `python -m grader` starts its sandbox before torch is imported:

    grader.core: grade(target, ex_ids=None, ...) -> Report; grade_submissions(submissions, ...) ->
                 [ExerciseResult]; Submission(ex_id, source, name, label=None, dependencies=None, ...)
    grader.sandbox: SandboxLimits(timeout_s=20, memory_mb=2048, ...); strict_problem() -> None, or why strict
                 mode cannot run here (what to install)
    grader.report: Report

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

What grader may import (the contracts `grader`, `grader-layers` and `harness` in .importlinter): of the
project, course.common, course.translation (the demo stage's model families) and solutions/ (the
references), never course.app, course.lessons, Streamlit, classroom/ or app_pages/, and never exercises/
(learner code runs only in the sandbox). Its own modules import down these layers only:

    __main__ > cli > serve, notebooks > notebook_export, options > core
    > judging: judge, diagnosis, mistakes, report, messages, weight_diff
    > the checks and the sandbox: variants, checks, compare; sandbox, untrusted_records, warm_server,
      run_folders, seccomp_filter
    > shared: text, bounded, notebook_submit
    > harness (copied into the sandbox: the standard library and torch only, nothing else of the project)

A new module takes its place in `grader-layers` (the contract lists every module of grader/).
"""
