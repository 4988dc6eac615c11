"""The training lab's tasks as batches of (source, target) ids: random digits, or a slice of sentence pairs;
and the decoder-only model's (chapters 14 and 15): a character stream, or random symbols repeated.

The digit tasks (copy, reverse, sort) draw fresh random sequences every step. The
sentence-pair task ("tatoeba") reads plain id lists made by
course.translation.lab_pairs (this package never reads the data itself): one
vocabulary for both sides, <pad> 0 fills both sequences to seq_len, <end> 1 closes
each target, and only the target's characters and its <end> are scored.

The decoder-only tasks give (input, next symbols) pairs: the target is the input
shifted left by one. "chars" reads windows of a character stream handed in as
plain id lists (course.translation.char_corpus makes it; never shipped);
"repeat" draws a random pattern and repeats it, so only the repeats can be
predicted, and only by looking back at the earlier copy.
"""

import torch

DIGIT_TASKS = ("copy", "reverse", "sort")
PAIRS_TASK = "tatoeba"
TASKS = (*DIGIT_TASKS, PAIRS_TASK)  # the training lab's (encoder-decoder)
CHARS_TASK, REPEAT_TASK = "chars", "repeat"
LM_TASKS = (CHARS_TASK, REPEAT_TASK)  # the decoder-only model's
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


def shifted(windows):
    """(N, T + 1) windows -> (input, next symbols), (N, T) each: the language model's pairs."""
    return windows[:, :-1], windows[:, 1:]


class CharsTask:
    """Next-character prediction on a stream {"tokens": characters, "train": ids, "test": ids}; all scored."""

    pad = None

    def __init__(self, config, corpus):
        if not corpus or len(corpus.get("train") or ()) <= config.seq_len or len(corpus.get("test") or ()) <= config.seq_len:
            raise ValueError("the chars task needs the character stream: make it with "
                             "`python -m course.translation.char_corpus --out FILE` and pass --pairs FILE")
        self.config, self.vocab_size = config, len(corpus["tokens"])
        self.train_ids = torch.tensor(corpus["train"], dtype=torch.long)  # (N,)
        self.test_ids = torch.tensor(corpus["test"], dtype=torch.long)  # (M,)

    def windows(self, ids, count, gen):
        """count random windows of seq_len + 1 ids from the stream ids -> (count, T + 1)."""
        T = self.config.seq_len
        starts = torch.randint(0, len(ids) - T, (count,), generator=gen)  # (count,)
        return ids[starts.unsqueeze(1) + torch.arange(T + 1)]  # (count, T + 1)

    def batch(self, gen):
        """batch_size random windows of the training stream as (input, next characters), (B, T) each."""
        return shifted(self.windows(self.train_ids, self.config.batch_size, gen))

    def test_set(self):
        """eval_size fixed windows of the held-out stream (seeded apart from training)."""
        gen = torch.Generator().manual_seed(self.config.seed + 1_000_003)
        return shifted(self.windows(self.test_ids, self.config.eval_size, gen))

    def probe(self):
        """The first seq_len + 1 held-out characters as (input, next characters), (1, T) each."""
        return shifted(self.test_ids[: self.config.seq_len + 1].unsqueeze(0))


MIN_PERIOD = 4  # the repeat task's shortest pattern


def repeated(config, count, gen):
    """count sequences of seq_len + 1 symbols, each a random pattern of its own length n (MIN_PERIOD to
    seq_len / 2) repeated to fill the sequence -> (ids (count, T + 1), periods (count,)). The period varies so
    that no fixed offset finds the earlier copy: only its content does."""
    T = config.seq_len
    periods = torch.randint(MIN_PERIOD, T // 2 + 1, (count,), generator=gen)  # (count,)
    pattern = torch.randint(0, config.vocab_size, (count, T // 2), generator=gen)  # (count, T / 2)
    where = torch.arange(T + 1).unsqueeze(0) % periods.unsqueeze(1)  # (count, T + 1): index into the pattern
    return pattern.gather(1, where), periods


def repeat_parts(periods, T):
    """{"first": (N, T) positions whose next symbol is new, "repeat": those whose next symbol continues a copy
    of the pattern seen before (position t >= n, the symbol at t having occurred at t - n)}."""
    t = torch.arange(T).unsqueeze(0)  # (1, T)
    n = periods.unsqueeze(1)  # (N, 1)
    return {"first": t < n - 1, "repeat": t >= n}


class RepeatTask:
    """Random patterns repeated; every position is trained, but only the repeats can be predicted, and only by
    finding the symbol's earlier occurrence and reading what followed it (an induction head)."""

    pad = None

    def __init__(self, config):
        if config.seq_len < 2 * MIN_PERIOD:
            raise ValueError(f"the repeat task needs seq_len >= {2 * MIN_PERIOD}, not {config.seq_len}")
        self.config, self.vocab_size = config, config.vocab_size

    def batch(self, gen):
        """A fresh batch (input, next symbols), (B, T) each."""
        return shifted(repeated(self.config, self.config.batch_size, gen)[0])

    def test_data(self):
        """(ids (N, T + 1), periods (N,)) of the fixed test set, seeded apart from training."""
        gen = torch.Generator().manual_seed(self.config.seed + 1_000_003)
        return repeated(self.config, self.config.eval_size, gen)

    def test_set(self):
        """eval_size fixed sequences as (input, next symbols)."""
        return shifted(self.test_data()[0])

    def test_parts(self):
        """repeat_parts of the test set."""
        return repeat_parts(self.test_data()[1], self.config.seq_len)

    def probe(self):
        """The sequence whose attention maps are kept (its period is probe_period())."""
        return shifted(self.probe_data()[0])

    def probe_data(self):
        """(ids (1, T + 1), periods (1,)) of the probe."""
        gen = torch.Generator().manual_seed(PROBE_SEED)
        return repeated(self.config, 1, gen)


def task_data(config, pairs=None):
    """The DigitTask, PairsTask, CharsTask (pairs: the character stream) or RepeatTask of config.task."""
    if config.task in DIGIT_TASKS:
        return DigitTask(config)
    if config.task == PAIRS_TASK:
        return PairsTask(config, pairs)
    if config.task == CHARS_TASK:
        return CharsTask(config, pairs)
    if config.task == REPEAT_TASK:
        return RepeatTask(config)
    raise ValueError(f"task must be one of {TASKS + LM_TASKS}, not {config.task!r}")


def scored(task, tgt):
    """(B, T) bool: the target positions that count in the loss and the accuracies."""
    return torch.ones_like(tgt, dtype=torch.bool) if task.pad is None else tgt != task.pad
