"""Logic of the demo pages: where checkpoints live, translations as tables, BLEU by length.

Streamlit-free, so the grader (checkpoint paths, probe sentences) and the tests
use it too. The trained translators are `<dir>/<model>.pt` with their BLEU
report `<dir>/<model>.bleu.json`; `<dir>` is $ATTENTION_LAB_CHECKPOINTS, by
default `checkpoints/` in the project root. pandas is imported inside the
functions that build frames: the grader imports this module for its
checkpoints and probes, and would pay ~0.3 s for it.
"""

import json
import os
import unicodedata
from pathlib import Path

import numpy as np

from course.common.paths import PROJECT_ROOT

from .models import families_with, family, model_names
from .vocab import BOS, EOS, UNK

# The grader's demo stage and the demo pages translate these. Plain sentences whose
# words are common in the Tatoeba data (so they are in the trained vocabularies).
PROBE_SENTENCES = (
    "i am happy.",
    "tom is a teacher.",
    "this book is very good.",
    "where is the station?",
    "we like to read books.",
    "my mother can swim.",
    "it is cold today.",
    "he didn't go to school yesterday.",
)
# The Translate page offers these: short everyday sentences that every shipped model
# translates correctly, greedy and with beam search (tests/test_translate_page.py checks
# them against the shipped checkpoints). None of them is in the data verbatim.
EXAMPLE_SENTENCES = (
    "where is the station?",
    "the weather is nice today.",
    "he is my friend.",
    "i have two brothers.",
    "she can speak english.",
    "we are students.",
)
DATA_HINT = "../shared/data/tatoeba-cmn-eng.tsv"  # where the development copy of the data lives


def checkpoint_dir():
    """The folder holding <model>.pt and <model>.bleu.json."""
    return Path(os.environ.get("ATTENTION_LAB_CHECKPOINTS") or PROJECT_ROOT / "checkpoints")


def checkpoint_path(name):
    """Path of the checkpoint of model `name`."""
    return checkpoint_dir() / f"{name}.pt"


def bleu_path(name):
    """Path of the BLEU-by-length report of model `name`."""
    return checkpoint_dir() / f"{name}.bleu.json"


def available_models():
    """The model names whose checkpoint file exists, in registration order."""
    return [name for name in model_names() if checkpoint_path(name).is_file()]


def learner_models():
    """The model names that can be built from a learner's exercise modules (their family lists some)."""
    return [name for name in model_names() if family(name).impl_modules]


def shipped_recipes():
    """{model name: its family's recipe} of the families that ship a checkpoint (Family.recipe)."""
    return {name: family(name).recipe for name in model_names() if family(name).recipe}


def train_command(name, data=DATA_HINT, minutes=15):
    """The exact command that trains model `name` into the checkpoint folder."""
    out = checkpoint_dir()
    try:
        out = out.resolve().relative_to(PROJECT_ROOT)
    except ValueError:
        pass
    return f"python -m course.translation.train --model {name} --data {data} --minutes {minutes:g} --out {out}"


def shipped_command(name, data=DATA_HINT):
    """The command with the shipped checkpoint's recipe (Family.recipe), or the plain one for another model."""
    recipe = family(name).recipe if name in model_names() else None
    if not recipe:
        return train_command(name, data)
    flags = " ".join(f"--{flag} {value:g}" for flag, value in recipe.items() if flag != "minutes")
    return f"{train_command(name, data, recipe['minutes'])} --device cpu {flags}"


def shipped_minutes(name):
    """Minutes of CPU training of the shipped checkpoint of `name` (15, the plain command's, for another model)."""
    return shipped_recipes().get(name, {}).get("minutes", 15)


def checkpoint_stamp(name):
    """(path, modification time, size) of a checkpoint: a cache key that changes when it is retrained."""
    path = checkpoint_path(name)
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def training_summary(metas):
    """What the checkpoints' metrics say about their training: {"minutes", "pairs", "device", "threads"}, or None.

    metas: the LoadedModel.meta dicts. Minutes (rounded) and threads are one
    figure when all runs agree, else a range "15–55"; pairs the largest
    training set, device "cpu" or "cuda" (the first model's when they differ).
    None when a checkpoint records no training time or pair count.
    """
    metrics = [m.get("metrics", {}) for m in metas]
    if not metrics or any(m.get("train_minutes") is None or m.get("train_pairs") is None for m in metrics):
        return None
    return {"minutes": _span(round(float(m["train_minutes"])) for m in metrics),
            "pairs": max(int(m["train_pairs"]) for m in metrics),
            "device": str(metrics[0].get("device", "cpu")).split(":")[0],
            "threads": _span(int(m.get("threads") or 1) for m in metrics)}


def _span(values):
    """'15' when all values agree, else 'lowest–highest'."""
    values = sorted(set(values))
    return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"


def marked_source(translation):
    """The source as the model read it, in Markdown: each unit as code, an unknown one as `<unk>` (`word`)."""
    words = [translation.source_words[i] for i in translation.source_word_index]  # each unit's word
    return " ".join(f"`{UNK}` (`{word}`)" if tok == UNK else f"`{tok}`"
                    for tok, word in zip(translation.source_tokens, words))


def reads_pieces(translation):
    """True when the model read at least one word as several subword pieces."""
    index = translation.source_word_index
    return len(set(index)) < len(index)


# ---- one translation as tables -------------------------------------------------------------


def step_labels(translation):
    """Row labels of the decoder steps: each output character, then <eos>."""
    return list(translation.tokens) + [EOS]


def decoder_input_labels(translation):
    """What the decoder is fed at each step: <bos>, then each output character (the final <eos> never is)."""
    return [BOS] + list(translation.tokens)


def cross_attention_frame(translation):
    """Cross-attention (target steps x source words) as a DataFrame, or None for the fixed-context model."""
    import pandas as pd

    if translation.cross_attention is None:
        return None
    values = np.asarray(translation.cross_attention, dtype=float)  # (T_out + 1, T_src)
    return pd.DataFrame(values, index=step_labels(translation), columns=list(translation.source_tokens))


def attention_row(translation, step):
    """The source words and the weights the decoder gave them at `step`."""
    import pandas as pd

    frame = cross_attention_frame(translation)
    if frame is None:
        return None
    check_step(translation, step)
    return pd.DataFrame({"position": range(frame.shape[1]), "word": list(frame.columns),
                         "weight": frame.iloc[step].to_numpy()})


def top_next_frame(translation, step):
    """The most probable next tokens at `step`, best first."""
    import pandas as pd

    check_step(translation, step)
    rows = translation.top_next[step]
    return pd.DataFrame({"token": [tok for tok, _ in rows], "probability": [p for _, p in rows]})


def check_step(translation, step):
    """Raise a clear error for a step outside the translation."""
    count = len(translation.top_next)
    if not 0 <= step < count:
        raise ValueError(f"step {step} is outside this translation: it has steps 0..{count - 1}")


def head_matrix(translation, kind, layer, head):
    """One Transformer attention map -> (values, row labels, column labels).

    kind: "encoder" (source x source), "decoder" (target x target, causal) or "cross"
    (target x source); layer and head count from 0. Rows are labelled by what each step writes;
    decoder self-attention's columns by what the decoder was fed (<bos> and the characters before).
    """
    arrays = {"encoder": translation.encoder_self_attention, "decoder": translation.decoder_self_attention,
              "cross": translation.cross_attention_heads}
    if kind not in arrays:
        raise ValueError(f"unknown attention kind {kind!r}; use one of {', '.join(arrays)}")
    weights = arrays[kind]
    if weights is None:
        raise ValueError(f"this translation has no {kind} attention (per-head maps come only with "
                         f"{', '.join(families_with('heads'))})")
    layers, heads = weights.shape[:2]
    if not (0 <= layer < layers and 0 <= head < heads):
        raise ValueError(f"layer {layer}, head {head} does not exist: the model has {layers} layers "
                         f"and {heads} heads (counting from 0)")
    src, tgt = list(translation.source_tokens), step_labels(translation)
    fed = decoder_input_labels(translation)  # the decoder's keys: its own inputs, <bos> first
    rows, cols = {"encoder": (src, src), "decoder": (tgt, fed), "cross": (tgt, src)}[kind]
    return np.asarray(weights[layer, head], dtype=float), rows, cols


def numbered(labels):
    """Labels made unique for tables ('0 我', '1 。', '2 。'): characters repeat."""
    return [f"{i} {label}" for i, label in enumerate(labels)]


# ---- BLEU by source length -------------------------------------------------------------------


def read_bleu_report(name):
    """The model's BLEU report dict, or None if there is none (or it cannot be read)."""
    path = bleu_path(name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def bleu_by_length(reports, method="greedy"):
    """Long table (model, bucket, bleu, count) from {model name: report} for one decoding method."""
    import pandas as pd

    rows = []
    for name, report in reports.items():
        for label, entry in report.get("buckets", {}).items():
            if entry.get(method) is not None:
                rows.append({"model": name, "bucket": label, "bleu": round(float(entry[method]), 2),
                             "count": int(entry.get("count", 0))})
    return pd.DataFrame(rows, columns=["model", "bucket", "bleu", "count"])


def overall_bleu(reports):
    """Table: model x decoding method -> corpus BLEU."""
    import pandas as pd

    return pd.DataFrame({name: report.get("bleu", {}) for name, report in reports.items()}).T.round(2)


def long_bleu(reports):
    """(table: model x decoding method -> BLEU on held-out sentences of 11+ words, count, min words)."""
    import pandas as pd

    rows = {name: {m: r["long"][m] for m in ("greedy", "beam") if r.get("long", {}).get(m) is not None}
            for name, r in reports.items() if r.get("long")}
    first = next((r["long"] for r in reports.values() if r.get("long")), {})
    return pd.DataFrame(rows).T.round(2), int(first.get("count", 0)), int(first.get("min_words", 0))


def beam_settings(reports):
    """{model: (beam size, length-penalty alpha, whether alpha was chosen on the validation set)}."""
    return {name: (int(r["beam_size"]), float(r["beam_alpha"]), bool(r.get("valid_beam_bleu_by_alpha")))
            for name, r in reports.items()
            if r.get("beam_size") and r.get("beam_alpha") is not None and r.get("bleu", {}).get("beam") is not None}


def alphas_at_edge(reports):
    """{model: alpha} of the reports whose beam alpha is the largest one their validation search tried while
    validation BLEU was still rising (decoding.still_rising): a larger alpha might have scored higher."""
    from .decoding import still_rising

    return {name: a for name, (_, a, _) in beam_settings(reports).items()
            if still_rising(reports[name].get("valid_beam_bleu_by_alpha"), a)}


def example_sentences(reports, bucket, method="greedy"):
    """The bucket's example sentences with each model's output beside the reference."""
    import pandas as pd

    rows = {}
    for name, report in reports.items():
        for example in report.get("examples", {}).get(bucket, []):
            row = rows.setdefault(example["en"], {"en": example["en"], "reference": example["reference"]})
            row[name] = example.get(method, "")
    return pd.DataFrame(list(rows.values()))


# ---- the learner's run beside the reference ------------------------------------------------------

ATTENTION_TOL = 1e-4  # the learner's attention agrees with the reference within this


def compare_with_reference(reference, learner):
    """(identical, largest attention difference) of a Translation and the learner's JSON dict."""
    same_tokens = list(reference.tokens) == list(learner.get("tokens", []))
    ref_attn, got_attn = reference.cross_attention, learner.get("cross_attention")
    if ref_attn is None or got_attn is None:
        diff = 0.0 if ref_attn is None and got_attn is None else float("inf")
    else:
        got = np.asarray(got_attn, dtype=float)
        diff = float(np.abs(got - ref_attn).max()) if got.shape == ref_attn.shape else float("inf")
    return same_tokens and diff <= ATTENTION_TOL, diff


def learner_attention_frame(learner):
    """The learner's cross-attention (JSON lists) as a DataFrame like cross_attention_frame."""
    import pandas as pd

    if learner.get("cross_attention") is None:
        return None
    return pd.DataFrame(np.asarray(learner["cross_attention"], dtype=float),
                        index=list(learner["tokens"]) + [EOS], columns=list(learner["source_tokens"]))


LATIN_END = 0x250  # Basic Latin .. Latin Extended-B: English text, with accents in borrowed words (café)


def non_english_characters(sentence):
    """The characters of `sentence` the English-only translators cannot read as English, in order of first
    appearance: letters of other scripts (Chinese, Cyrillic...) and symbols such as emoji."""
    found = []
    for char in str(sentence):
        category = unicodedata.category(char)
        foreign_letter = category.startswith("L") and ord(char) >= LATIN_END
        symbol = category in ("So", "Sk", "Co", "Cs") or 0x1F000 <= ord(char) <= 0x1FAFF
        if (foreign_letter or symbol) and char not in found:
            found.append(char)
    return found


def has_english_word(sentence):
    """True if `sentence` has a word in Latin letters (something an English-only model can translate)."""
    return any(char.isalpha() and ord(char) < LATIN_END for char in str(sentence))
