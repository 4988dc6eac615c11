"""Tables of the Pieces, beams and BLEU page: word pieces, the beam after each step, BLEU's counts.

Streamlit-free and language-free: column names are keys (the page renames them
from its catalog). The numbers come from subword_steps, beam_steps and bleu_steps.
"""

import pandas as pd

from .beam_steps import on_greedy_path
from .decoding import length_penalty

DEFAULT_SENTENCE = "His daughter has become a pretty woman."  # a shipped test example: greedy misses 了, beam does not


def report_examples(report):
    """The test sentences a BLEU report ships as examples, [{en, reference, greedy, beam}], shortest first."""
    found = [ex for bucket in (report or {}).get("examples", {}).values() for ex in bucket]
    return sorted(found, key=lambda ex: len(ex["en"].split()))


def pieces_frame(words):
    """(word, pieces, piece count, merges applied, unknown) per WordPieces."""
    return pd.DataFrame({"word": [w.word for w in words], "pieces": [" ".join(w.pieces) for w in words],
                         "count": [len(w.pieces) for w in words], "merges": [len(w.steps) for w in words],
                         "unknown": [w.unknown for w in words]})


def merges_frame(word_pieces):
    """(step, merged, pieces) of one word: the characters it starts from (step 0), then each merge."""
    rows = [{"step": 0, "merged": "", "pieces": " ".join(word_pieces.start)}]
    rows += [{"step": i, "merged": f"{a} + {b}", "pieces": " ".join(pieces)}
             for i, ((a, b), pieces) in enumerate(word_pieces.steps, start=1)]
    return pd.DataFrame(rows, columns=["step", "merged", "pieces"])


def beam_frame(trace):
    """(step, rank, output, log_prob, ended, greedy_path) of every hypothesis in the beam after every step."""
    rows = [{"step": t, "rank": rank, "output": h.text + (" <eos>" if h.ended else ""),
             "log_prob": round(h.log_prob, 3), "ended": h.ended, "greedy_path": on_greedy_path(h, trace.greedy)}
            for t, beam in enumerate(trace.steps, start=1) for rank, h in enumerate(beam, start=1)]
    return pd.DataFrame(rows, columns=["step", "rank", "output", "log_prob", "ended", "greedy_path"])


def final_frame(trace):
    """(final, log_prob, length, penalty, score, chosen) of the final hypotheses, best score first."""
    rows = [{"final": h.text, "log_prob": round(h.log_prob, 3), "length": h.length,
             "penalty": round(length_penalty(h.length, trace.alpha), 3),
             "score": round(h.score(trace.alpha), 3), "chosen": h == trace.chosen} for h in trace.final]
    return pd.DataFrame(rows, columns=["final", "log_prob", "length", "penalty", "score", "chosen"])


def orders_frame(steps):
    """(n, matches, total, precision, smoothed) of a BleuSteps."""
    return pd.DataFrame([{"n": o.n, "matches": o.matches, "total": o.total, "precision": round(o.precision, 2),
                          "smoothed": o.smoothed} for o in steps.orders],
                        columns=["n", "matches", "total", "precision", "smoothed"])


def ngram_frame(rows):
    """(ngram, in_output, in_reference, clipped) from bleu_steps.ngram_table."""
    return pd.DataFrame(rows, columns=["ngram", "in_output", "in_reference", "clipped"])
