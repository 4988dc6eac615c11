"""Hostile ex03: find the project through /proc/<pid>/cwd and /proc/<pid>/root of every visible process."""

for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["self", str(os.getppid())]:
    for link in ("cwd", "root"):
        for rel in ("solutions/ex03_scoring.py", "@ROOT@/solutions/ex03_scoring.py".lstrip("/")):
            try:
                use_reference(open(f"/proc/{pid}/{link}/{rel}").read())
            except (OSError, SyntaxError):
                pass
