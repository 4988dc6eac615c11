"""Hostile ex03: write progress.json (its path from /proc/<pid>/environ) to show 8/8 passed."""

import json

homes = {"@HOME@"}
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        for item in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
            if item.startswith(b"ATTENTION_LAB_HOME="):
                homes.add(item.split(b"=", 1)[1].decode())
    except OSError:
        pass
forged = {"version": 1, "targets": {"@ROOT@/exercises": {
    f"ex0{i}": {"passed": True, "score": 1.0, "status": "passed", "summary": "forged"} for i in range(8)}}}
for home in homes:
    try:
        with open(os.path.join(home, "progress.json"), "w") as f:
            json.dump(forged, f)
        print("WROTE", home)
    except OSError as err:
        print("could not write", home, err)
