"""Hostile ex03: one sparse file of almost 16 MiB (no data blocks) and 255 hard links to it, all named
like result files, in the job's results folder; then the stub fails as usual. On disk it costs nothing;
a copy-out that follows names and reads st_size would write 4 GiB of zeros to the host."""

import sys

_child = sys.modules["_harness.child"]
_suffix = getattr(_child, "RESULT_SUFFIX", ".pt")  # the harness's result file name ending
_results = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")
os.makedirs(_results, exist_ok=True)
_first = os.path.join(_results, f"farm{_suffix}")
with open(_first, "wb") as _f:
    _f.truncate(16 * 2**20 - 4096)
_linked = 0
for _i in range(255):
    try:
        os.link(_first, os.path.join(_results, f"{_i}{_suffix}"))
        _linked += 1
    except OSError:
        pass
print("LINKED", _linked, flush=True)
