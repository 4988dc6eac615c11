"""Hostile ex03: look for a process of the box outside the job's limits (the process holding the sandbox
open is the one started first): its cgroup and its limits, as /proc shows them to the learner."""

own = open("/proc/self/cgroup").read()
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()):
    try:
        cgroup = open(f"/proc/{pid}/cgroup").read()
        limits = open(f"/proc/{pid}/limits").read().splitlines()
    except OSError as err:
        print(f"process {pid}: unreadable ({err})", flush=True)
        continue
    where = "same cgroup" if cgroup == own else f"OTHER CGROUP {cgroup!r} (the learner's: {own!r})"
    print(f"process {pid}: {where}", flush=True)
    for line in limits:
        if line.startswith(("Max address space", "Max processes")):
            print(f"process {pid}: {' '.join(line.split())}", flush=True)
