"""Hostile ex03: read solutions/ by absolute path and by searching the disk."""

for candidate in ["@ROOT@/solutions/ex03_scoring.py", "/work/solutions/ex03_scoring.py"]:
    try:
        use_reference(open(candidate).read())
        break
    except (OSError, SyntaxError):
        pass
for top, dirs, files in os.walk("/"):
    if top.startswith(("/proc", "/sys", "/usr")):
        dirs[:] = []
    if top.endswith("solutions") and "ex03_scoring.py" in files:
        use_reference(open(os.path.join(top, "ex03_scoring.py")).read())
