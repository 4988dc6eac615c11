"""Checks and known mistakes for exercise 3 (additive and dot-product scoring)."""

import torch

from solutions.ex03_scoring import AdditiveAttention, DotProductAttention

from .base import (
    Check,
    Mistake,
    call_desc,
    generator,
    init_text,
    number_checks,
    randn,
    reference_state,
    weights_locator,
    weights_property,
    with_parameter,
)

MODULE = "ex03_scoring"
NAMES = ["queries", "keys", "values", "valid_lens"]


def _attention(cls_name, init_args, B, n_q, n_k, q, k, v, valid_lens, dtype, seed, train=False):
    """One forward (and backward) of a scoring module against the reference (in training
    mode: dropout active, the random stream seeded the same on both sides)."""
    cls = {"AdditiveAttention": AdditiveAttention, "DotProductAttention": DotProductAttention}[cls_name]
    g = generator(seed)
    args = [randn(g, B, n_q, q, dtype=dtype), randn(g, B, n_k, k, dtype=dtype),
            randn(g, B, n_k, v, dtype=dtype), valid_lens]
    spec = {"module": MODULE, "cls": cls_name, "init_args": init_args,
            "state": reference_state(cls, init_args, dtype), "dtype": dtype, "args": args,
            "arg_names": NAMES, "grad": ("queries", "keys", "values"), "grad_seed": seed,
            "capture": ("attention_weights",), "watch_inputs": ("queries", "keys", "values"),
            "train": train, "train_seed": seed}
    lens = ("check.no_lens", {}) if valid_lens is None else f"valid_lens {tuple(valid_lens.shape)}"
    dt = str(dtype).replace("torch.", "")
    name = ("check.attention", {"module": cls_name, "sizes": f"B={B}, n_q={n_q}, n_k={n_k}", "lens": lens,
                                "dtype": dt})
    mode = "mode.train" if train else "mode.eval"
    if train:
        name = ("check.train_mode", {"what": name, "p": init_args[-1]})
    call = ("call.in_mode", {"module": init_text(cls_name, init_args), "mode": (mode, {}),
                             "call": call_desc("forward", NAMES, args)})
    return Check(name, call, "module_forward", spec,
                 properties=(weights_property("attention_weights", 3),), target=cls_name, locate=weights_locator())


def _batch_items(cls_name, init_args, seed):
    """Each example of a batch gives the same output alone."""
    cls = {"AdditiveAttention": AdditiveAttention, "DotProductAttention": DotProductAttention}[cls_name]
    g = generator(seed)
    d = init_args[1] if cls_name == "AdditiveAttention" else 4
    args = [randn(g, 3, 2, d), randn(g, 3, 5, init_args[0] if cls_name == "AdditiveAttention" else 4),
            randn(g, 3, 5, 3), torch.tensor([5, 2, 3])]
    spec = {"module": MODULE, "cls": cls_name, "init_args": init_args,
            "state": reference_state(cls, init_args), "args": args}
    return Check(("check.batch_items", {"module": cls_name}),
                 ("call.batch_items", {"module": init_text(cls_name, init_args)}),
                 "batch_items", spec, properties=(_items_match,), target=cls_name)


def _items_match(results, spec):
    """Outputs for example b alone equal row b of the batched output."""
    full = results.get("full")
    if not isinstance(full, torch.Tensor):
        return None
    for b in range(full.shape[0]):
        item = results.get(f"item{b}")
        if isinstance(item, torch.Tensor) and item.shape == full[b : b + 1].shape:
            if not torch.allclose(item, full[b : b + 1], rtol=1e-4, atol=1e-5):
                return ("prop.batch_mixed", {"b": b})
    return None


def variant_checks(chosen, rng):
    """Off the published exercise: both scorings at sizes drawn for the variant (its temperature given by
    grader/variants.py), with valid lengths."""
    B, n_q, n_k, d, v = rng.randint(1, 4), rng.randint(1, 5), rng.randint(2, 7), rng.randint(2, 9), rng.randint(1, 6)
    lens = torch.tensor([rng.randint(1, n_k) for _ in range(B)])
    seed = rng.randrange(2**31)
    return [_attention("DotProductAttention", (0.3,), B, n_q, n_k, d, d, v, lens, torch.float32, seed),
            _attention("AdditiveAttention", (d + 1, d, 8, 0.3), B, n_q, n_k, d, d + 1, v, lens, torch.float64,
                       seed + 1)]


def build():
    """The exercise's checks, in the order they are reported."""
    add_args = (6, 4, 8, 0.3)  # key_size, query_size, num_hiddens, dropout
    return number_checks("ex03", [
        _attention("AdditiveAttention", add_args, 2, 3, 5, 4, 6, 7, None, torch.float32, 1),
        _attention("AdditiveAttention", add_args, 2, 3, 5, 4, 6, 7, torch.tensor([2, 5]), torch.float32, 2),
        _attention("AdditiveAttention", add_args, 2, 3, 5, 4, 6, 7,
                   torch.tensor([[1, 3, 5], [4, 2, 1]]), torch.float64, 3),
        _attention("DotProductAttention", (0.3,), 3, 2, 6, 4, 4, 5, None, torch.float32, 4),
        _attention("DotProductAttention", (0.3,), 3, 2, 6, 4, 4, 5, torch.tensor([6, 2, 3]), torch.float32, 5),
        _attention("DotProductAttention", (0.3,), 2, 4, 3, 9, 9, 2,
                   torch.tensor([[1, 2, 3, 3], [3, 1, 2, 0]]), torch.float64, 6),
        _attention("DotProductAttention", (0.0,), 2, 3, 4, 16, 16, 5, torch.tensor([3, 4]), torch.float32, 7),
        _batch_items("AdditiveAttention", add_args, 8),
        _batch_items("DotProductAttention", (0.3,), 9),
        # Training mode: dropout on the weights, with the same random stream as the reference.
        _attention("AdditiveAttention", (6, 4, 8, 0.5), 2, 3, 5, 4, 6, 7, torch.tensor([2, 5]),
                   torch.float32, 10, train=True),
        _attention("DotProductAttention", (0.5,), 3, 2, 6, 4, 4, 5, torch.tensor([6, 2, 3]),
                   torch.float32, 11, train=True),
        _attention("DotProductAttention", (0.5,), 2, 4, 3, 9, 9, 2,
                   torch.tensor([[1, 2, 3, 3], [3, 1, 2, 0]]), torch.float64, 12, train=True),
        _attention("AdditiveAttention", (6, 4, 8, 0.0), 2, 3, 5, 4, 6, 7, torch.tensor([3, 1]),
                   torch.float32, 13, train=True),
        *_temperature_checks(),  # appended: the checks above keep their ids and draws
        *_square_checks(),  # appended after those
    ])


def _square_checks():
    """AdditiveAttention with as many queries as keys (n_q = n_k), with and without lengths: the other additive
    cases all have n_q != n_k, so code whose scores put the keys on the query axis raises on all of them and its
    hint cannot name n_q != n_k; it runs on these two."""
    add_args = (6, 4, 8, 0.3)
    return [_attention("AdditiveAttention", add_args, 2, 4, 4, 4, 6, 7, torch.tensor([3, 4]), torch.float32, 16),
            _attention("AdditiveAttention", add_args, 3, 3, 3, 4, 6, 7, None, torch.float64, 17)]


TEMPERATURE = 0.7  # an explicit temperature, off the published 1.0 (and off 0.5, 2, 3: no listed mistake's value)


def _temperature_checks():
    """Both scorings with valid lengths at an explicit temperature."""
    dot = _attention("DotProductAttention", (0.3,), 3, 2, 6, 4, 4, 5, torch.tensor([6, 2, 3]), torch.float32, 14)
    additive = _attention("AdditiveAttention", (6, 4, 8, 0.3), 2, 3, 5, 4, 6, 7, torch.tensor([2, 5]), torch.float32,
                          15)
    return [with_parameter(dot, "temperature", TEMPERATURE), with_parameter(additive, "temperature", TEMPERATURE)]


MISTAKES = (
    Mistake(
        "dot_no_scale",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)",
        "scores = torch.bmm(queries, keys.transpose(1, 2))",
        where=("DotProductAttention",),
    ),
    Mistake(
        "dot_scale_by_d",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / d",
        where=("DotProductAttention",),
    ),
    Mistake(
        "dot_softmax_over_queries",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k)\n"
        "        self.attention_weights = masked_softmax(scores, valid_lens)",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k)\n"
        "        self.attention_weights = masked_softmax(scores.transpose(1, 2), None).transpose(1, 2)",
        where=("DotProductAttention",),
    ),
    Mistake(
        "additive_no_tanh",
        "features = torch.tanh(projected_q.unsqueeze(2) + projected_k.unsqueeze(1))",
        "features = projected_q.unsqueeze(2) + projected_k.unsqueeze(1)",
        where=("AdditiveAttention",),
    ),
    Mistake(
        "additive_ignores_mask",
        "scores = self.w_v(features).squeeze(-1)  # (B, n_q, n_k)\n"
        "        self.attention_weights = masked_softmax(scores, valid_lens)",
        "scores = self.w_v(features).squeeze(-1)  # (B, n_q, n_k)\n"
        "        self.attention_weights = masked_softmax(scores, None)",
        where=("AdditiveAttention",),
    ),
    Mistake(
        "dot_ignores_mask",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k)\n"
        "        self.attention_weights = masked_softmax(scores, valid_lens)",
        "scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k)\n"
        "        self.attention_weights = masked_softmax(scores, None)",
        where=("DotProductAttention",),
    ),
    Mistake(
        "weights_times_keys",
        "return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)\n\n\nclass Dot",
        "return torch.bmm(self.dropout(self.attention_weights), keys)  # (B, n_q, v)\n\n\nclass Dot",
        where=("AdditiveAttention", "DotProductAttention"),
    ),
    Mistake(
        "no_dropout",
        'return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)\n\n\nclass Dot',
        'return torch.bmm(self.attention_weights, values)  # (B, n_q, v)\n\n\nclass Dot',
        also=(('return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)', 'return torch.bmm(self.attention_weights, values)  # (B, n_q, v)'),),
        where=("AdditiveAttention", "DotProductAttention"),
    ),
    Mistake(
        "dropout_on_output",
        'return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)\n\n\nclass Dot',
        'return self.dropout(torch.bmm(self.attention_weights, values))  # (B, n_q, v)\n\n\nclass Dot',
        also=(('return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)', 'return self.dropout(torch.bmm(self.attention_weights, values))  # (B, n_q, v)'),),
        where=("AdditiveAttention", "DotProductAttention"),
    ),
    Mistake(
        "weights_after_dropout",
        'scores = self.w_v(features).squeeze(-1)  # (B, n_q, n_k)\n        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)\n        return torch.bmm(self.dropout(self.attention_weights), values)',
        'scores = self.w_v(features).squeeze(-1)  # (B, n_q, n_k)\n        self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))  # (B, n_q, n_k)\n        return torch.bmm(self.attention_weights, values)',
        also=(('self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)\n        return torch.bmm(self.dropout(self.attention_weights), values)', 'self.attention_weights = self.dropout(masked_softmax(scores, valid_lens))  # (B, n_q, n_k)\n        return torch.bmm(self.attention_weights, values)'),),
        where=("AdditiveAttention", "DotProductAttention"),
    ),
    Mistake(
        "dot_scale_value_size",
        "d = queries.shape[-1]",
        "d = values.shape[-1]",
        where=("DotProductAttention",),
    ),
    Mistake(
        "absolute_import",
        "from .ex01_softmax import masked_softmax",
        "from exercises.ex01_softmax import masked_softmax",
        raises=r"No module named 'exercises'",
    ),
    Mistake(
        "additive_tanh_after_w_v",
        "features = torch.tanh(projected_q.unsqueeze(2) + projected_k.unsqueeze(1))",
        "features = projected_q.unsqueeze(2) + projected_k.unsqueeze(1)",
        also=(("scores = self.w_v(features).squeeze(-1)", "scores = torch.tanh(self.w_v(features)).squeeze(-1)"),),
        where=("AdditiveAttention",),
    ),
    Mistake(
        "dot_temperature_multiplies",
        "queries = queries / self.temperature",
        "queries = queries * self.temperature",
        where=("DotProductAttention",),
    ),
    Mistake(
        "additive_pairs_misaligned",
        "features = torch.tanh(projected_q.unsqueeze(2) + projected_k.unsqueeze(1))",
        "pairs = projected_q.repeat(1, keys.shape[1], 1) + projected_k.repeat_interleave(queries.shape[1], dim=1)\n"
        "        features = torch.tanh(pairs.reshape(queries.shape[0], queries.shape[1], keys.shape[1], -1))",
        where=("AdditiveAttention",),
    ),
    Mistake(
        "dropout_on_scores",
        "self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)\n"
        "        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)\n\n\nclass Dot",
        "self.attention_weights = masked_softmax(self.dropout(scores), valid_lens)  # (B, n_q, n_k)\n"
        "        return torch.bmm(self.attention_weights, values)  # (B, n_q, v)\n\n\nclass Dot",
        also=(("self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)\n"
               "        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)",
               "self.attention_weights = masked_softmax(self.dropout(scores), valid_lens)  # (B, n_q, n_k)\n"
               "        return torch.bmm(self.attention_weights, values)  # (B, n_q, v)"),),
        where=("AdditiveAttention", "DotProductAttention"),
    ),
    Mistake(
        "additive_scaled_like_dot",
        "scores = self.w_v(features).squeeze(-1)  # (B, n_q, n_k)",
        "scores = self.w_v(features).squeeze(-1) / math.sqrt(features.shape[-1])  # (B, n_q, n_k)",
        where=("AdditiveAttention",),
    ),
)
