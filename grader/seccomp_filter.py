"""The strict sandbox's seccomp program, built here (outside the sandbox) with libseccomp's Python bindings.

Everything is allowed except the system calls a learner's job never needs and
that reach beyond its box: tracing or reading other processes, io_uring,
userfaultfd, bpf, perf events, the kernel keyring, mounts, namespaces (unshare,
setns, clone with a namespace flag), kernel modules and kexec, clocks, swap,
reboot. They fail with EPERM; clone3 fails with ENOSYS, so that the C library
falls back to clone, whose flags the filter can see. Foreign architectures
(i386, x32) are killed by libseccomp's default. The harness in the box loads
the exported program as bytes and imports nothing from here.
"""

import errno
import functools
import tempfile

try:  # Debian's python3-seccomp, else PyPI's pyseccomp (the same API, over the same libseccomp)
    import seccomp
except ImportError:
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError):  # no binding, or no libseccomp under it: strict_problem() says what to install
        seccomp = None

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "bpf", "perf_event_open",
    "keyctl", "add_key", "request_key", "mount", "umount2", "pivot_root", "chroot", "move_mount",
    "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "open_by_handle_at",
    "name_to_handle_at", "quotactl", "acct", "swapon", "swapoff", "reboot", "syslog", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm", "lookup_dcookie", "vhangup",
)
NAMESPACE_FLAGS = (0x00020000, 0x10000000, 0x20000000, 0x40000000, 0x08000000, 0x04000000, 0x02000000,
                   0x00000080)  # CLONE_NEWNS, NEWUSER, NEWPID, NEWNET, NEWIPC, NEWUTS, NEWCGROUP, NEWTIME
INSTALL_LINE = "pip install pyseccomp (or apt-get install -y python3-seccomp) and apt-get install -y libseccomp2"


def problem():
    """Why the filter cannot be built here (a sentence saying what to install), or None."""
    if seccomp is None:
        return f"the strict sandbox's seccomp filter needs libseccomp's Python bindings: {INSTALL_LINE}"
    try:
        program()
    except Exception as err:  # libseccomp itself missing or too old
        return f"the strict sandbox's seccomp filter could not be built ({err}): {INSTALL_LINE}"
    return None


def _filter():
    """The SyscallFilter: allow by default, deny the list above."""
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for flag in NAMESPACE_FLAGS:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    return rules


@functools.lru_cache(maxsize=1)
def program():
    """The filter as a classic BPF program (bytes of struct sock_filter), as bwrap's --seccomp reads it."""
    with tempfile.TemporaryFile() as out:
        _filter().export_bpf(out)
        out.seek(0)
        return out.read()
