"""The training lab's tasks as batches of (source, target) ids: random digits, or a slice of sentence pairs.

The digit tasks (copy, reverse, sort) draw fresh random sequences every step. The
sentence-pair task ("tatoeba") reads plain id lists made by
course.translation.lab_pairs (this package never reads the data itself): one
vocabulary for both sides, <pad> 0 fills both sequences to seq_len, <end> 1 closes
each target, and only the target's characters and its <end> are scored.
"""

import torch

DIGIT_TASKS = ("copy", "reverse", "sort")
PAIRS_TASK = "tatoeba"
TASKS = (*DIGIT_TASKS, PAIRS_TASK)
PAD_ID, END_ID = 0, 1  # of the sentence-pair vocabulary (course.translation.lab_pairs.SPECIALS)
PROBE_SEED = 2024


def target_of(src, task):
    """The sequence to output for src (B, T): itself, reversed, or sorted (B, T)."""
    if task == "copy":
        return src
    if task == "reverse":
        return src.flip(1)
    if task == "sort":
        return src.sort(dim=1).values
    raise ValueError(f"task must be one of {DIGIT_TASKS}, not {task!r}")


def probe_source(config):
    """The fixed digit probe (1, T): distinct symbols where the vocabulary allows, so the maps read clearly."""
    gen = torch.Generator().manual_seed(PROBE_SEED)
    c = config
    if c.seq_len <= c.vocab_size:
        return torch.randperm(c.vocab_size, generator=gen)[: c.seq_len].unsqueeze(0)  # (1, T)
    return torch.randint(0, c.vocab_size, (1, c.seq_len), generator=gen)  # (1, T)


class DigitTask:
    """copy, reverse or sort of random digit sequences; every position is scored."""

    pad = None  # no padding: every sequence has seq_len symbols

    def __init__(self, config):
        self.config, self.vocab_size = config, config.vocab_size

    def batch(self, gen):
        """A fresh training batch (src, tgt), each (B, T), drawn from gen."""
        c = self.config
        src = torch.randint(0, c.vocab_size, (c.batch_size, c.seq_len), generator=gen)  # (B, T)
        return src, target_of(src, c.task)

    def test_set(self):
        """The fixed test set (src, tgt), seeded apart from training."""
        c = self.config
        gen = torch.Generator().manual_seed(c.seed + 1_000_003)  # never the training stream
        src = torch.randint(0, c.vocab_size, (c.eval_size, c.seq_len), generator=gen)  # (N, T)
        return src, target_of(src, c.task)

    def probe(self):
        """The probe pair (1, T), (1, T) whose attention maps are kept."""
        src = probe_source(self.config)
        return src, target_of(src, self.config.task)


def padded(seqs, length, end=None):
    """Id lists -> (N, length) tensor, each list (and `end` after it, when given) then <pad>."""
    out = torch.full((len(seqs), length), PAD_ID, dtype=torch.long)  # (N, length)
    for i, seq in enumerate(seqs):
        seq = list(seq) + ([end] if end is not None else [])
        if len(seq) > length:
            raise ValueError(f"pair {i} has {len(seq)} ids, more than seq_len = {length}; make the slice shorter")
        out[i, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out


class PairsTask:
    """Sentence pairs from plain id lists {"tokens", "train", "test"}; <pad> positions are not scored."""

    pad = PAD_ID

    def __init__(self, config, pairs):
        if not pairs or not pairs.get("train") or not pairs.get("test"):
            raise ValueError("the tatoeba task needs the slice of sentence pairs: make it with "
                             "`python -m course.translation.lab_pairs --out FILE` and pass --pairs FILE")
        self.config, self.vocab_size = config, len(pairs["tokens"])
        n = config.seq_len
        self.train_src = padded([s for s, _ in pairs["train"]], n)  # (N, T)
        self.train_tgt = padded([t for _, t in pairs["train"]], n, END_ID)  # (N, T)
        self.test_src = padded([s for s, _ in pairs["test"]], n)  # (M, T)
        self.test_tgt = padded([t for _, t in pairs["test"]], n, END_ID)  # (M, T)

    def batch(self, gen):
        """A training batch: batch_size pairs drawn with replacement from the slice, (B, T) each."""
        rows = torch.randint(0, len(self.train_src), (self.config.batch_size,), generator=gen)  # (B,)
        return self.train_src[rows], self.train_tgt[rows]

    def test_set(self):
        """The held-out pairs (src, tgt), (M, T) each."""
        return self.test_src, self.test_tgt

    def probe(self):
        """The training pair whose attention maps are kept: the first of those with the longest source."""
        lengths = (self.train_src != PAD_ID).sum(1)  # (N,)
        i = int(lengths.argmax())
        return self.train_src[i: i + 1], self.train_tgt[i: i + 1]


def task_data(config, pairs=None):
    """The DigitTask or PairsTask of config.task."""
    if config.task in DIGIT_TASKS:
        return DigitTask(config)
    if config.task == PAIRS_TASK:
        return PairsTask(config, pairs)
    raise ValueError(f"task must be one of {TASKS}, not {config.task!r}")


def scored(task, tgt):
    """(B, T) bool: the target positions that count in the loss and the accuracies."""
    return torch.ones_like(tgt, dtype=torch.bool) if task.pad is None else tgt != task.pad
