"""The training lab's blocks: exercise 7's own TransformerEncoderBlock and TransformerDecoderBlock, rewired.

An ex07 block writes every sub-layer once, in its forward, as `addnormK(X, sublayer(X))` with
AddNorm = ln(dropout(Y) + X), the original post-norm wiring. Each of the lab's ablations is that same block
with sub-modules swapped after it is built, never a second block implementation:

- layernorm=False: each AddNorm's `ln` becomes nn.Identity(), so the slot computes dropout(Y) + X;
- residual=False: each AddNorm becomes a NormOnly, ln(dropout(Y));
- pre_norm=True (x + f(ln(x))): each AddNorm becomes a PreNormAdd, the plain sum X + dropout(Y), which keeps
  the block's LayerNorm as its `ln`, and a forward pre-hook on the sub-layer (PreNormInputs) normalises the
  sub-layer's input with that `ln`: self-attention's queries, keys and values, cross-attention's queries only
  (the encoder's memory is left as it is), the FFN's input;
- scaled=False: each attention's inner DotProductAttention is wrapped in an UnscaledAttention;
- attention_only (encoder blocks, the decoder-only stack's too): the FFN becomes nn.Identity() and its AddNorm a
  KeepStream, which returns the stream X unchanged.

The swapped slots keep the block's own LayerNorm under the name `ln`, so a state_dict reads as ex07's does
(`addnorm1.ln.weight`). The lab has no dropout: every Dropout here has rate 0.0, which in training mode returns
its input itself and draws no random numbers (tests/test_lab_blocks.py), so the lab's batches and weights follow
the seed alone.

Streamlit-free; the blocks come from a package by name (the reference `solutions`, or a learner's staged copy).
"""

import importlib
import inspect
import math
from contextlib import contextmanager

import torch
from torch import nn

DROPOUT = 0.0  # the lab trains without dropout
# (sub-layer, its AddNorm, how many leading arguments of the sub-layer carry the stream to normalise under
# pre-norm): self-attention reads the stream as queries, keys and values; cross-attention as queries only; the FFN
# as its one input. The decoder's self-attention is given (X, cache, cache), and with a fresh state the cache is X.
ENCODER_SLOTS = (("attention", "addnorm1", 3), ("ffn", "addnorm2", 1))
DECODER_SLOTS = (("attention1", "addnorm1", 3), ("attention2", "addnorm2", 1), ("ffn", "addnorm3", 1))


def block_classes(impl):
    """(TransformerEncoderBlock, TransformerDecoderBlock) of package `impl`'s ex07 module."""
    ex07 = importlib.import_module(f"{impl}.ex07_transformer")
    return ex07.TransformerEncoderBlock, ex07.TransformerDecoderBlock


class UnscaledAttention(nn.Module):
    """Wraps a scaled dot-product attention and undoes its 1/sqrt(d): softmax(q . k)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, queries, keys, values, valid_lens=None):
        """Same shapes as DotProductAttention; queries (B, n_q, d) are multiplied by sqrt(d) first."""
        out = self.inner(queries * math.sqrt(queries.shape[-1]), keys, values, valid_lens)  # (B, n_q, v)
        self.attention_weights = self.inner.attention_weights  # (B, n_q, n_k)
        return out


class NormOnly(nn.Module):
    """The AddNorm slot without its residual connection: ln(dropout(Y)); X, the sub-layer's input, is dropped."""

    def __init__(self, ln):
        super().__init__()
        self.dropout = nn.Dropout(DROPOUT)
        self.ln = ln

    def forward(self, X, Y):
        """X, Y (B, T, d) -> (B, T, d)."""
        return self.ln(self.dropout(Y))  # (B, T, d)


class PreNormAdd(nn.Module):
    """The AddNorm slot of pre-norm: X + dropout(Y) (dropout(Y) alone without the residual connection).

    It owns the sub-layer's LayerNorm as `ln` but does not apply it to the sum: a PreNormInputs hook applies it to
    the sub-layer's input, so the block computes x + f(ln(x)) and the stream itself is never normalised."""

    def __init__(self, ln, residual=True):
        super().__init__()
        self.dropout = nn.Dropout(DROPOUT)
        self.ln, self.residual = ln, residual

    def forward(self, X, Y):
        """X the stream (B, T, d), Y the sub-layer's output (B, T, d) -> (B, T, d)."""
        Y = self.dropout(Y)  # (B, T, d)
        return X + Y if self.residual else Y  # (B, T, d)


class KeepStream(nn.Module):
    """The slot of a removed sub-layer: returns the stream X and ignores Y.

    It keeps the block's LayerNorm as `ln`, unused: the lab's attention-only blocks always held that LayerNorm
    (its parameters are counted in the shipped runs, chapter 15's model among them, and saved in its weights)."""

    def __init__(self, ln):
        super().__init__()
        self.ln = ln

    def forward(self, X, Y):
        """X (B, T, d) -> X."""
        return X


class PreNormInputs:
    """Forward pre-hook: the sub-layer's first `count` arguments pass through `slot.ln` first.

    An argument given more than once (self-attention's X as queries, keys and values) is normalised once and the
    one result passed in each place, as x + f(ln(x)) writes it. A plain object rather than a closure, so that a
    copied model's hook follows the copy's LayerNorm."""

    def __init__(self, slot, count):
        self.slot, self.count = slot, count
        self.signature = None  # module.forward's, read at the first call (the hook runs on every forward)

    def __call__(self, module, args, kwargs):
        """(args, kwargs) of module.forward with the stream arguments normalised."""
        if self.signature is None:
            self.signature = inspect.signature(module.forward)
        bound = self.signature.bind(*args, **kwargs)
        normed = {}
        for name in list(self.signature.parameters)[:self.count]:
            x = bound.arguments.get(name)
            if x is not None:
                if id(x) not in normed:
                    normed[id(x)] = self.slot.ln(x)  # (B, T, d)
                bound.arguments[name] = normed[id(x)]
        return bound.args, bound.kwargs


@contextmanager
def no_draws_for(block_class, name):
    """While a `block_class` is built inside, its sub-module `name` draws nothing from torch's global generator.

    A module registration hook notes the generator's state each time the block registers a sub-module; when it
    registers `name`, the generator goes back to the state noted at the block's previous registration (or at the
    start), which is where it stood before that sub-module was built. The block's later sub-modules then draw what
    they would have drawn had it never been built."""
    marks = [torch.get_rng_state()]

    def hook(module, attribute, submodule):
        if type(module) is block_class:
            if attribute == name:
                torch.set_rng_state(marks[-1])
            marks.append(torch.get_rng_state())

    handle = nn.modules.module.register_module_module_registration_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def rewire_slot(block, sublayer, slot_name, count, config):
    """Put the config's wiring into one sub-layer slot of `block` (the module docstring's list)."""
    slot = getattr(block, slot_name)
    ln = slot.ln if config.layernorm else nn.Identity()
    if config.pre_norm:
        new = PreNormAdd(ln, config.residual)
        getattr(block, sublayer).register_forward_pre_hook(PreNormInputs(new, count), with_kwargs=True)
    elif not config.residual:
        new = NormOnly(ln)
    else:
        slot.ln = ln  # ex07's own AddNorm, its LayerNorm or an Identity
        new = slot
    setattr(block, slot_name, new)


def rewire(block, slots, config):
    """block with the config's sub-layer wiring and attention scaling; returns it."""
    for sublayer, slot_name, count in slots:
        rewire_slot(block, sublayer, slot_name, count, config)
        if not config.scaled and sublayer.startswith("attention"):  # a MultiHeadAttention: its inner attention
            mha = getattr(block, sublayer)
            mha.attention = UnscaledAttention(mha.attention)
    return block


def norms_last(block, slot_names):
    """Register the block's AddNorm slots again, in order, so that they come after its sub-layers; returns block.

    ex07 registers each AddNorm right after its sub-layer; the lab's blocks always listed the sub-layers first and
    their norms after. The order of model.parameters() is the order in which gradient clipping sums the squared
    gradient norms, and that sum's float rounding moves a run's weights (by 1e-4 within 30 steps without the
    residual connection): in the lab's order the shipped runs are reproduced to the last bit."""
    for name in slot_names:
        slot = getattr(block, name)
        delattr(block, name)
        setattr(block, name, slot)
    return block


def drop_ffn(block, slot_name, config):
    """The attention-only block: its FFN becomes an Identity and the FFN's slot a KeepStream."""
    block.ffn = nn.Identity()
    setattr(block, slot_name, KeepStream(getattr(block, slot_name).ln if config.layernorm else nn.Identity()))
    return block


def encoder_block(config, impl="solutions"):
    """impl's TransformerEncoderBlock of the config's sizes and wiring; attention-only without its FFN.

    Also the decoder-only model's block: given a causal valid_lens (B, T) it is GPT's block (no cross-attention).
    An attention-only block is built with no_draws_for its FFN: the lab's earlier blocks never built one, and every
    weight after it keeps the value those blocks' seed gave it (the shipped runs; tests/test_training_golden.py)."""
    Encoder, _ = block_classes(impl)
    c = config
    if c.attention_only:
        with no_draws_for(Encoder, "ffn"):
            block = Encoder(c.num_hiddens, c.ffn_num_hiddens, c.num_heads, DROPOUT)
        rewire(drop_ffn(block, ENCODER_SLOTS[1][1], c), ENCODER_SLOTS[:1], c)  # the attention's slot only
    else:
        block = rewire(Encoder(c.num_hiddens, c.ffn_num_hiddens, c.num_heads, DROPOUT), ENCODER_SLOTS, c)
    return norms_last(block, [slot for _, slot, _ in ENCODER_SLOTS])


def decoder_block(config, i, impl="solutions"):
    """impl's TransformerDecoderBlock number i of the config's sizes and wiring (always with its FFN: the lab's
    attention_only removes the encoder blocks' FFN only)."""
    _, Decoder = block_classes(impl)
    c = config
    block = rewire(Decoder(c.num_hiddens, c.ffn_num_hiddens, c.num_heads, DROPOUT, i), DECODER_SLOTS, c)
    return norms_last(block, [slot for _, slot, _ in DECODER_SLOTS])


def fresh_state(memory, valid_lens, num_layers):
    """An ex07 decoder state with empty caches: each block then attends over the whole target under the causal
    mask (its valid lengths 1..T), in one pass. memory (B, S, d), valid_lens (B,) or None."""
    return [memory, valid_lens, [None] * num_layers]
