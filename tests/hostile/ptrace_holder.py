"""Hostile ex03: attach with ptrace to every other process of the box (the holder bwrap and its `cat`
included), read or write their memory through process_vm_readv/writev and /proc/<pid>/mem."""

import ctypes
import errno

libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH, PTRACE_DETACH, PTRACE_SEIZE = 16, 17, 0x4206


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def outcome(result):
    return "SUCCEEDED" if result >= 0 else f"refused ({errno.errorcode.get(ctypes.get_errno(), '?')})"


buffer = ctypes.create_string_buffer(64)
local = IoVec(ctypes.cast(buffer, ctypes.c_void_p), 64)
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()):
    print(f"ptrace attach {pid}:", outcome(libc.ptrace(PTRACE_ATTACH, pid, None, None)), flush=True)
    libc.ptrace(PTRACE_DETACH, pid, None, None)
    print(f"ptrace seize {pid}:", outcome(libc.ptrace(PTRACE_SEIZE, pid, None, None)), flush=True)
    libc.ptrace(PTRACE_DETACH, pid, None, None)
    remote = IoVec(0x400000, 64)
    for name in ("process_vm_readv", "process_vm_writev"):
        call = getattr(libc, name)
        print(f"{name} {pid}:", outcome(call(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)), flush=True)
    try:
        with open(f"/proc/{pid}/mem", "r+b", buffering=0):
            print(f"/proc/{pid}/mem opened for writing: SUCCEEDED", flush=True)
    except OSError as err:
        print(f"/proc/{pid}/mem: refused ({errno.errorcode.get(err.errno, '?')})", flush=True)
