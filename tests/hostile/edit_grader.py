"""Hostile ex03: edit grader/core.py and solutions/ so that the next honest run passes stubs."""

for path in ("@ROOT@/grader/core.py", "@ROOT@/grader/judge.py", "@ROOT@/solutions/ex03_scoring.py",
             "@ROOT@/exercises/ex03_scoring.py"):
    try:
        with open(path, "a") as f:
            f.write("\n# tampered by a learner\n")
        print("TAMPERED", path)
    except OSError as err:
        print("could not tamper", path, err)
