"""Chapter 11: FlashAttention's tiling and the online softmax.

Streamlit-free. `tiled_attention` (exercise 10's reference, solutions.ex10_tiled_attention: one definition)
computes softmax(Q K^T / sqrt(d)) V one block of keys at a time with a running max m and a running sum l per
query (the recurrence of Dao et al. 2022), so it never holds more than an (n_q, block) slice of the scores;
`max_difference` compares it with the reference DotProductAttention of
exercise 3 (solutions.ex03_scoring), which the course uses everywhere. `row_trace` is the same recurrence
for one query row, kept step by step for the page's table. Peak memory is counted with chapter 10's
counter (`ch10.peak_bytes`: the bytes of the tensors a computation creates, alive at once).
"""

import math
import statistics
import time

import altair as alt
import pandas as pd
import torch

from course.common import charts
from course.lessons import ch10
from course.lessons.torch_threads import cpu_threads
from solutions.ex03_scoring import DotProductAttention
from solutions.ex10_tiled_attention import tiled_attention

TOLERANCE = 1e-5  # the largest |tiled - reference| the page's text promises in float32 (seen: ~1e-7)
D_DIFF = 16  # width of the seeded queries, keys and values of the difference table
BATCH = 2  # examples in the difference table (the second one is masked by valid_lens)
CASES = ("none", "per_example", "per_query")  # the valid_lens of each row of the difference table
MEMORY_N = (128, 256, 512, 1024)  # sequence lengths of the peak-memory chart
MEMORY_BLOCK = 64  # the block size of the tiled version in that chart and in the timing
MEMORY_D = 64  # width of queries, keys and values there (chapter 10's d)
TIME_N = 2048  # the sequence length of the timing
TIME_BLOCKS = (4, 16, 64, 256)  # block sizes timed against the reference
TIME_REPEATS = 3
VARIANTS = ("full", "tiled")
MIB = 2**20


def reference_attention(queries, keys, values, valid_lens=None):
    """The course's reference: DotProductAttention of exercise 3 (no dropout) -> (B, n_q, v)."""
    with torch.no_grad():
        return DotProductAttention(dropout=0.0)(queries, keys, values, valid_lens)


def seeded_inputs(batch, n, d, seed=0, dtype=torch.float32):
    """Seeded standard-normal queries, keys and values, (batch, n, d) each."""
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, n, d, generator=gen, dtype=dtype) for _ in range(3))  # (B, n, d) each


def case_lens(case, n, batch=BATCH):
    """valid_lens of a difference-table case: None; (B,) with the second example cut to about half; or (B, n_q)
    with query i seeing keys 0..i (causal-like, the second example one key fewer, so its first row sees none)."""
    if case == "none":
        return None
    if case == "per_example":
        return torch.tensor([n] + [(n + 1) // 2] * (batch - 1))  # (B,)
    if case == "per_query":
        rows = torch.arange(1, n + 1)  # (n_q,)
        return torch.stack([(rows - b).clamp_min(0) for b in range(batch)])  # (B, n_q)
    raise ValueError(f"case must be one of {CASES}; got {case!r}")


def max_difference(queries, keys, values, block_size, valid_lens=None):
    """max |tiled_attention - the reference DotProductAttention| over every output entry (0.0 for empty input)."""
    with torch.no_grad():
        tiled = tiled_attention(queries, keys, values, block_size, valid_lens)  # (B, n_q, v)
    reference = reference_attention(queries, keys, values, valid_lens)  # (B, n_q, v)
    return float((tiled - reference).abs().max()) if tiled.numel() else 0.0


def block_count(n, block_size):
    """How many key blocks the loop visits for n keys: ceil(n / block_size)."""
    return -(-int(n) // int(block_size))


def difference_rows(n, block_size, d=D_DIFF, seed=0):
    """[{case, blocks, last, diff}] for each of CASES at n keys: the blocks visited, the size of the last one
    and max |tiled - reference| on seeded float32 inputs (BATCH, n, d). On one torch thread: the loop's small
    operations ran 50 times slower on two threads of a busy machine."""
    queries, keys, values = seeded_inputs(BATCH, n, d, seed)
    last = n - (block_count(n, block_size) - 1) * block_size
    with cpu_threads(1):
        return [{"case": case, "blocks": block_count(n, block_size), "last": last,
                 "diff": max_difference(queries, keys, values, block_size, case_lens(case, n))} for case in CASES]


def row_trace(scores, block_size):
    """The online softmax of one row of scores, block by block -> (rows, m, l).

    rows: [{block, first, last, block_max, m, rescale, l}] with the keys first..last of each block, the block's
    own max, the running max m after it, the factor exp(m_old - m) the earlier sum was multiplied by (1.0 when
    the max did not grow), and the running sum l of exp(score - m). float64, so the table shows the recurrence,
    not rounding; m and l at the end: the max of the row and sum exp(score - max).
    """
    s = torch.as_tensor(scores, dtype=torch.float64)  # (n,)
    m, l, rows = float("-inf"), 0.0, []  # noqa: E741
    for index, start in enumerate(range(0, s.shape[0], int(block_size))):
        block = s[start:start + int(block_size)]  # (blk,)
        block_max = float(block.max())
        m_new = max(m, block_max)
        rescale = math.exp(m - m_new) if math.isfinite(m) else 0.0
        l = l * rescale + float(torch.exp(block - m_new).sum())  # noqa: E741
        rows.append({"block": index + 1, "first": start, "last": start + block.shape[0] - 1,
                     "block_max": block_max, "m": m_new, "rescale": rescale if index else None, "l": l})
        m = m_new
    return rows, m, l


def growth_counts(scores, block_size):
    """How many blocks after the first raise each row's running max: scores (n_q, n) -> (n_q,) int."""
    s = torch.as_tensor(scores, dtype=torch.float64)  # (n_q, n)
    blocks = block_count(s.shape[1], block_size)
    padded = torch.full((s.shape[0], blocks * int(block_size)), float("-inf"), dtype=s.dtype)  # (n_q, blocks * blk)
    padded[:, :s.shape[1]] = s
    block_max = padded.view(s.shape[0], blocks, int(block_size)).amax(dim=-1)  # (n_q, blocks)
    running = block_max.cummax(dim=-1).values  # (n_q, blocks)
    return (running[:, 1:] > running[:, :-1]).sum(dim=-1)  # (n_q,)


def trace_scores(n, block_size, d=D_DIFF, seed=0):
    """(i, scores) for the page's trace: of the n queries of the difference table's first example, the first one
    whose running max grows in the most blocks (so that the rescaling shows), and its scores
    q_i . k_j / sqrt(d), float64 (n,)."""
    queries, keys, _ = seeded_inputs(BATCH, n, d, seed)
    scores = (queries[0].double() @ keys[0].double().T) / math.sqrt(d)  # (n_q, n)
    row = int(torch.argmax(growth_counts(scores, block_size)))  # the first of the largest counts
    return row, scores[row]  # (n,)


def peak_mib(n, block_size=MEMORY_BLOCK, d=MEMORY_D, seed=0):
    """{variant: peak MiB} of the tensors the reference and tiled_attention create for one sequence (1, n, d),
    counted with chapter 10's counter (inputs not included, the output included)."""
    queries, keys, values = seeded_inputs(1, n, d, seed)
    return {"full": ch10.peak_bytes(reference_attention, queries, keys, values) / MIB,
            "tiled": ch10.peak_bytes(lambda q, k, v: tiled_attention(q, k, v, block_size), queries, keys, values)
            / MIB}


def memory_table(n_values=MEMORY_N, block_size=MEMORY_BLOCK, d=MEMORY_D):
    """Long table (n, variant, mib) of peak_mib over n_values (counted on one torch thread)."""
    rows = []
    with cpu_threads(1):
        for n in n_values:
            rows += [{"n": n, "variant": variant, "mib": mib} for variant, mib in peak_mib(n, block_size, d).items()]
    return pd.DataFrame(rows)


def memory_claims(table=None, block_size=MEMORY_BLOCK, d=MEMORY_D):
    """The figures the page's text quotes from memory_table (computed when None): at the largest n, each peak
    (MiB) and full / tiled; the growth of each from the second-largest n (doubling n); the block and d."""
    table = memory_table(block_size=block_size, d=d) if table is None else table
    table = table.pivot(index="n", columns="variant", values="mib")
    top, below = table.iloc[-1], table.iloc[-2]
    return {"n": int(table.index[-1]), "block": block_size, "d": d, "full_mib": float(top["full"]),
            "tiled_mib": float(top["tiled"]), "ratio": float(top["full"] / top["tiled"]),
            "full_growth": float(top["full"] / below["full"]), "tiled_growth": float(top["tiled"] / below["tiled"])}


def memory_spec(rows, texts):
    """Log-log line chart dict of peak MiB against n, one line per variant.

    rows: tuple of (n, variant, mib) so the page can cache it; texts: title, x, y, variant and the display
    name of each variant.
    """
    frame = pd.DataFrame(rows, columns=["n", "variant", "mib"])
    frame["variant"] = frame["variant"].map(lambda v: texts[v])
    chart = charts.line_chart(frame, "n", "mib", color="variant", title=texts["title"], x_title=texts["x"],
                              y_title=texts["y"], color_title=texts["variant"], log_y=True, points=True,
                              height=320)
    chart.encoding.x.scale = alt.Scale(type="log", base=2)  # n doubles from point to point
    return chart.configure_legend(orient="top", direction="horizontal", title=None).to_dict()


def time_calls(n=None, blocks=None, d=MEMORY_D, repeats=TIME_REPEATS, seed=0, threads=1):
    """{'full': ms, block: ms for each block size}: median wall time of one call of the reference and of
    tiled_attention with each block size, on `threads` torch threads (n and blocks: TIME_N and TIME_BLOCKS as
    they are when called). After one warm-up call each, the computations take turns call by call, so a burst
    of load slows all of them alike."""
    n, blocks = TIME_N if n is None else n, TIME_BLOCKS if blocks is None else blocks
    queries, keys, values = seeded_inputs(1, n, d, seed)
    fns = {"full": lambda: reference_attention(queries, keys, values)}
    fns.update({block: (lambda b=block: tiled_attention(queries, keys, values, b)) for block in blocks})
    samples = {name: [] for name in fns}
    with cpu_threads(threads), torch.no_grad():
        for fn in fns.values():
            fn()
        for _ in range(repeats):
            for name, fn in fns.items():
                start = time.perf_counter()
                fn()
                samples[name].append(1000 * (time.perf_counter() - start))
    return {name: statistics.median(times) for name, times in samples.items()}


def speed_verdict(ms):
    """('all_slower' | 'all_faster' | 'mixed', [blocks slower than the reference], [blocks faster]) of time_calls."""
    blocks = [key for key in ms if key != "full"]
    slower = [b for b in blocks if ms[b] > ms["full"]]
    faster = [b for b in blocks if ms[b] <= ms["full"]]
    return ("all_slower" if not faster else "all_faster" if not slower else "mixed"), slower, faster


def matrix_mib(n):
    """MiB of one n x n float32 matrix."""
    return 4 * n * n / MIB
