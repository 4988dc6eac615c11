"""Hostile ex03: 4 forked children x 1.5 GiB each, and 2 GB written to /tmp."""

import time

children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            block = torch.ones(3 * 2**28 // 2, dtype=torch.float32)  # 1.5 GiB touched
            block += 1
            time.sleep(20)
        finally:
            os._exit(0)
    children.append(pid)
time.sleep(3)  # let the children take their memory
try:
    for i in range(256):  # 2 GB in files of 8 MB (each under the per-file cap)
        with open(f"/tmp/fill{i}", "wb") as f:
            for _ in range(8):
                f.write(b"x" * 2**20)
except OSError as err:
    for i in range(256):  # make room to say so
        if os.path.exists(f"/tmp/fill{i}"):
            os.remove(f"/tmp/fill{i}")
    print("disk write stopped:", err, flush=True)
for pid in children:
    os.waitpid(pid, 0)
