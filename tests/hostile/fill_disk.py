"""Hostile ex03: write 128 MiB to every folder in reach (files of 4 MiB), and report how much stuck."""

written = {}
for folder in ("/tmp", "/", "/dev", "/dev/shm", "/job", "/job/results", "/job/out", os.getcwd()):
    total = 0
    try:
        for i in range(32):
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                f.write(b"x" * 2**22)
            total += 4
    except OSError:
        pass
    written[folder] = total
for folder in written:  # make room to say how much it was
    for i in range(32):
        try:
            os.remove(os.path.join(folder, f"fill{i}"))
        except OSError:
            pass
print("WRITTEN_MB", sum(written.values()), written, flush=True)
