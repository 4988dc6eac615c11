"""Hostile ex03: keep the server's stdout pipe open in a detached process."""

import time

held = []
for pid in {os.getppid()}:
    try:
        held.append(os.open(f"/proc/{pid}/fd/1", os.O_WRONLY))
    except OSError:
        pass
if os.fork() == 0:
    os.setsid()
    for fd in held:
        try:
            os.write(fd, b"done job99\n")
        except OSError:
            pass
    time.sleep(300)
    os._exit(0)
