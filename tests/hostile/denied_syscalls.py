"""Hostile ex03: the system calls that reach beyond the box (io_uring, userfaultfd, bpf, perf events,
the keyring, mounts, new namespaces) straight through syscall(2); any that works is a way out."""

import ctypes
import errno
import threading

libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
attr = ctypes.create_string_buffer(128)  # struct perf_event_attr / bpf_attr, zeroed
CALLS = {  # name: (x86_64 number, args)
    "io_uring_setup": (425, (8, params)),
    "userfaultfd": (323, (0,)),
    "bpf": (321, (0, attr, 128)),
    "perf_event_open": (298, (attr, 0, -1, -1, 0)),
    "keyctl": (250, (0, -3, 0)),  # KEYCTL_GET_KEYRING_ID of the session keyring
    "add_key": (248, (b"user", b"k", b"v", 1, -3)),
    "unshare(CLONE_NEWUSER)": (272, (0x10000000,)),
    "unshare(CLONE_NEWNET)": (272, (0x40000000,)),
    "clone(CLONE_NEWUSER)": (56, (0x10000000 | 17, 0, 0, 0, 0)),  # | SIGCHLD; a child would exit at once
    "mount": (165, (b"none", b"/tmp", b"tmpfs", 0, None)),
    "setns": (308, (0, 0)),
}
for name, (number, args) in CALLS.items():
    result = libc.syscall(number, *args)
    if result == 0 and name.startswith("clone"):
        os._exit(0)  # in the child
    said = "SUCCEEDED" if result >= 0 else f"refused ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    print(f"{name}: {said}", flush=True)
thread = threading.Thread(target=lambda: None)  # pthread_create: clone3, then clone without namespace flags
thread.start()
thread.join()
print("a thread: started", flush=True)
