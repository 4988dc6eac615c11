"""The three translators, built from the reference or the learner's modules.

`impl` names the package the attention modules come from: "solutions",
"exercises", or any importable package with the same files (the grader stages
a learner's copy). Every model has the same state_dict keys whatever `impl`
is, so one checkpoint loads into all of them.

Uniform interface (course.decoding builds greedy and beam search on it):
  forward(src, src_valid_lens, tgt_in) -> logits (B, T_tgt, V)   training
  encode(src, src_valid_lens) -> state
  decode_step(tokens (B, 1), state) -> (logits (B, V), state, attention dict)
  reorder_state(state, index) -> state with batch rows index (beam search)
  encoder_attention() -> per-layer self-attention of the last encode, or None
"""

import importlib
import math
import types
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .seq2seq import Seq2SeqEncoder

MODEL_NAMES = ("seq2seq", "bahdanau", "transformer")


@dataclass
class RNNConfig:
    src_vocab_size: int  # English vocabulary size (from the training split)
    tgt_vocab_size: int  # Chinese character vocabulary size
    embed_size: int = 256  # token embedding width, encoder and decoder
    num_hiddens: int = 256  # GRU hidden size (also the attention width)
    num_layers: int = 2  # stacked GRU layers, encoder and decoder alike
    dropout: float = 0.2  # between GRU layers and on attention weights
    io_dropout: float = 0.0  # training only: on token embeddings and on the features the vocabulary layer reads
    attention_dropout: float = -1.0  # on the attention weights (Bahdanau); negative: the same as dropout
    decoder_init: str = "encoder"  # Bahdanau decoder's first state: "encoder" (final encoder state) or "zeros"
    bidirectional: bool = False  # encoder reads both ways, num_hiddens // 2 units per direction


@dataclass
class TransformerConfig:
    src_vocab_size: int  # English vocabulary size
    tgt_vocab_size: int  # Chinese character vocabulary size
    num_hiddens: int = 256  # model width d (embeddings, attention, residual stream)
    ffn_num_hiddens: int = 768  # hidden width of the position-wise FFN
    num_heads: int = 4  # attention heads (num_hiddens must divide by it)
    num_layers: int = 3  # encoder blocks and, separately, decoder blocks
    dropout: float = 0.1  # residual, attention and positional-encoding dropout
    max_len: int = 512  # longest sequence the positional table covers
    tie_embeddings: bool = False  # the decoder's output layer reuses its token embedding matrix (Vaswani et al.)


def config_class(name):
    """The config dataclass for a model name."""
    check_name(name)
    return TransformerConfig if name == "transformer" else RNNConfig


def check_name(name):
    """Raise a clear error for an unknown model name."""
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; use one of {', '.join(MODEL_NAMES)}")


def import_impl(impl, module):
    """Import <impl>.<module>; impl is a package name or an imported package."""
    pkg = impl.__name__ if isinstance(impl, types.ModuleType) else str(impl)
    try:
        return importlib.import_module(f"{pkg}.{module}")
    except ImportError as err:
        raise ImportError(
            f"cannot import {pkg}.{module} ({err}); impl must name an importable package "
            "holding the exercise files, e.g. 'solutions' or 'exercises'"
        ) from err


def run_encoder(encoder, src, src_valid_lens):
    """Seq2SeqEncoder over packed sequences, so padding never reaches the final state."""
    embs = encoder.embedding(src)  # (B, T_src, E) (a hook drops out some in training: add_io_dropout)
    lengths = src_valid_lens.detach().to("cpu", torch.long).clamp_min(1)  # (B,)
    packed = pack_padded_sequence(embs, lengths, batch_first=True, enforce_sorted=False)
    outputs, hidden_state = encoder.rnn(packed)  # packed, (L * directions, B, H / directions)
    outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])  # (B, T_src, H)
    return outputs, encoder.merge_directions(hidden_state)  # (B, T_src, H), (L, B, H)


class FixedContextDecoder(nn.Module):
    """GRU decoder fed one fixed context (the encoder's last top-layer state) at every step.

    Like the Bahdanau decoder (exercise 4) it has a deep output that reads the
    GRU output, the context and the input embedding, so the two models differ
    only in where the context comes from: one vector, or attention at each step.
    """

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout, batch_first=True)
        self.deep_output = nn.Linear(2 * num_hiddens + embed_size, num_hiddens)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        """State (context, hidden): context is h_n of the top encoder layer."""
        _, hidden_state = enc_outputs  # (L, B, H)
        return (hidden_state[-1], hidden_state)  # (B, H), (L, B, H)

    def forward(self, X, state):
        """X (B, T) -> logits (B, T, vocab), new state."""
        context, hidden_state = state
        embs = self.embedding(X)  # (B, T, E)
        contexts = context.unsqueeze(1).expand(-1, X.shape[1], -1)  # (B, T, H)
        outputs, hidden_state = self.rnn(torch.cat((embs, contexts), dim=-1), hidden_state)  # (B, T, H)
        features = torch.tanh(self.deep_output(torch.cat((outputs, contexts, embs), dim=-1)))  # (B, T, H)
        return self.dense(features), (context, hidden_state)  # (B, T, V)


class OutputDropout:
    """Forward hook: dropout on a module's output while the module is training."""

    def __init__(self, p):
        self.p = p

    def __call__(self, module, inputs, output):
        return nn.functional.dropout(output, self.p, module.training)


class InputDropout:
    """Forward pre-hook: dropout on a module's first input while the module is training."""

    def __init__(self, p):
        self.p = p

    def __call__(self, module, inputs):
        return (nn.functional.dropout(inputs[0], self.p, module.training),) + tuple(inputs[1:])


def add_io_dropout(model, p):
    """Regularise an RNN translator without touching its modules' code or state_dict keys.

    Dropout on the source and target embeddings and on the deep output's
    features before the vocabulary layer, in training only (eval is exactly the plain
    model); hooks, because the decoder's forward is the learner's exercise.
    """
    if p <= 0:
        return model
    model.encoder.embedding.register_forward_hook(OutputDropout(p))
    model.decoder.embedding.register_forward_hook(OutputDropout(p))
    model.decoder.dense.register_forward_pre_hook(InputDropout(p))
    return model


def set_attention_dropout(decoder, p):
    """Dropout on the decoder's attention weights (p < 0 keeps the constructor's value)."""
    dropout = getattr(getattr(decoder, "attention", None), "dropout", None)
    if p >= 0 and isinstance(dropout, nn.Dropout):
        dropout.p = p


class Translator(nn.Module):
    """What both translator families share: teacher-forced training through encode()."""

    def forward(self, src, src_valid_lens, tgt_in):
        """Teacher-forced logits (B, T_tgt, V) (causal inside the Transformer's decoder)."""
        logits, _ = self.decoder(tgt_in, self.encode(src, src_valid_lens))
        return logits


class RNNTranslator(Translator):
    """GRU encoder-decoder; with attention=True the decoder is the learner's Bahdanau decoder."""

    def __init__(self, config, impl="solutions", attention=True):
        super().__init__()
        self.config, self.attention = config, attention
        c = config
        self.encoder = Seq2SeqEncoder(c.src_vocab_size, c.embed_size, c.num_hiddens, c.num_layers, c.dropout,
                                      c.bidirectional)
        if attention:
            decoder_cls = import_impl(impl, "ex04_bahdanau").Seq2SeqAttentionDecoder
        else:
            decoder_cls = FixedContextDecoder
        self.decoder = decoder_cls(c.tgt_vocab_size, c.embed_size, c.num_hiddens, c.num_layers, c.dropout)
        if attention and c.decoder_init not in ("encoder", "zeros"):
            raise ValueError(f"decoder_init must be 'encoder' or 'zeros', not {c.decoder_init!r}")
        set_attention_dropout(self.decoder, c.attention_dropout)
        add_io_dropout(self, c.io_dropout)

    def encode(self, src, src_valid_lens):
        """Source (B, T_src) -> decoder state."""
        outputs, hidden_state = run_encoder(self.encoder, src, src_valid_lens)  # (B, T_src, H), (L, B, H)
        if self.attention and self.config.decoder_init == "zeros":
            hidden_state = torch.zeros_like(hidden_state)  # the source reaches the decoder only through attention
        return self.decoder.init_state((outputs, hidden_state), src_valid_lens)

    def decode_step(self, tokens, state):
        """tokens (B, 1) -> logits (B, V), state, {"cross": (B, T_src)} if attending."""
        logits, state = self.decoder(tokens, state)  # (B, 1, V)
        attn = {}
        if self.attention:
            attn["cross"] = self.decoder.attention_weights[:, -1]  # (B, T_src)
        return logits[:, -1], state, attn

    def reorder_state(self, state, index):
        """Keep batch rows `index` of every state tensor."""
        if self.attention:
            outputs, hidden_state, valid_lens = state
            return (outputs[index], hidden_state[:, index], None if valid_lens is None else valid_lens[index])
        context, hidden_state = state
        return (context[index], hidden_state[:, index])

    def encoder_attention(self):
        """An RNN encoder has no self-attention."""
        return None


class TransformerEncoder(nn.Module):
    """Embedding * sqrt(d) + positional encoding, then encoder blocks."""

    def __init__(self, config, pe_mod, tr_mod):
        super().__init__()
        c = config
        self.num_hiddens = c.num_hiddens
        self.embedding = nn.Embedding(c.src_vocab_size, c.num_hiddens)
        self.pos_encoding = pe_mod.PositionalEncoding(c.num_hiddens, c.dropout, c.max_len)
        self.blks = nn.ModuleList(
            tr_mod.TransformerEncoderBlock(c.num_hiddens, c.ffn_num_hiddens, c.num_heads, c.dropout)
            for _ in range(c.num_layers)
        )
        self.attention_weights = [None] * c.num_layers

    def forward(self, X, valid_lens):
        """X (B, T_src) -> (B, T_src, d); keeps each block's self-attention weights."""
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))  # (B, T_src, d)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)  # (B, T_src, d)
            self.attention_weights[i] = getattr(blk.attention, "attention_weights", None)  # (B, heads, T, T)
        return X


class TransformerDecoder(nn.Module):
    """Embedding * sqrt(d) + positional encoding, decoder blocks, output layer."""

    def __init__(self, config, pe_mod, tr_mod):
        super().__init__()
        c = config
        self.num_hiddens, self.num_layers = c.num_hiddens, c.num_layers
        self.embedding = nn.Embedding(c.tgt_vocab_size, c.num_hiddens)
        self.pos_encoding = pe_mod.PositionalEncoding(c.num_hiddens, c.dropout, c.max_len)
        self.blks = nn.ModuleList(
            tr_mod.TransformerDecoderBlock(c.num_hiddens, c.ffn_num_hiddens, c.num_heads, c.dropout, i)
            for i in range(c.num_layers)
        )
        self.dense = nn.Linear(c.num_hiddens, c.tgt_vocab_size)
        if c.tie_embeddings:  # one (V, d) matrix embeds a character and scores it as the next one
            nn.init.normal_(self.embedding.weight, 0.0, c.num_hiddens ** -0.5)  # x sqrt(d) in forward: unit scale
            self.dense.weight = self.embedding.weight
        self.attention_weights = [[None, None] for _ in range(c.num_layers)]  # [self, cross] per block

    def init_state(self, enc_outputs, enc_valid_lens):
        """[encoder outputs, their valid lengths, one empty cache per block]."""
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        """X (B, T) new target tokens -> logits (B, T, V); the caches grow by T."""
        cache = state[2][0]
        offset = 0 if cache is None else cache.shape[1]  # target positions already decoded
        X = self.embedding(X) * math.sqrt(self.num_hiddens)  # (B, T, d)
        if offset == 0:
            X = self.pos_encoding(X)  # (B, T, d)
        else:
            # Incremental decoding (eval): positions offset..offset+T-1 of the table.
            table = self.pos_encoding(torch.zeros(1, offset + X.shape[1], X.shape[2], device=X.device))
            X = X + table[:, offset:].to(X.dtype)  # (B, T, d)
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)  # (B, T, d)
            self.attention_weights[i] = [
                getattr(blk.attention1, "attention_weights", None),  # (B, heads, T, T_seen)
                getattr(blk.attention2, "attention_weights", None),  # (B, heads, T, T_src)
            ]
        return self.dense(X), state  # (B, T, V)


class TransformerTranslator(Translator):
    """Transformer encoder-decoder from PositionalEncoding and the ex07 blocks."""

    def __init__(self, config, impl="solutions"):
        super().__init__()
        self.config = config
        pe_mod = import_impl(impl, "ex06_positional_encoding")
        tr_mod = import_impl(impl, "ex07_transformer")
        self.encoder = TransformerEncoder(config, pe_mod, tr_mod)
        self.decoder = TransformerDecoder(config, pe_mod, tr_mod)

    def encode(self, src, src_valid_lens):
        """Source (B, T_src) -> decoder state."""
        return self.decoder.init_state(self.encoder(src, src_valid_lens), src_valid_lens)

    def decode_step(self, tokens, state):
        """tokens (B, 1) -> logits (B, V), state, cross and self attention (B, layers, heads, .)."""
        logits, state = self.decoder(tokens, state)  # (B, 1, V)
        attn = {}
        weights = self.decoder.attention_weights
        if all(w is not None for pair in weights for w in pair):
            attn["self"] = torch.stack([w[0][:, :, -1] for w in weights], dim=1)  # (B, L, heads, t)
            attn["cross"] = torch.stack([w[1][:, :, -1] for w in weights], dim=1)  # (B, L, heads, T_src)
        return logits[:, -1], state, attn

    def reorder_state(self, state, index):
        """Keep batch rows `index` of the encoder outputs, lengths and caches."""
        enc_outputs, valid_lens, caches = state
        return [
            enc_outputs[index],
            None if valid_lens is None else valid_lens[index],
            [None if c is None else c[index] for c in caches],
        ]

    def encoder_attention(self):
        """Self-attention of the last encode, (B, layers, heads, T_src, T_src), or None."""
        weights = self.encoder.attention_weights
        if any(w is None for w in weights):
            return None
        return torch.stack(weights, dim=1)


def build_model(name, config, impl="solutions"):
    """Model `name` ("seq2seq", "bahdanau" or "transformer") with modules from `impl`."""
    check_name(name)
    if isinstance(config, dict):
        config = config_class(name)(**config)
    try:
        if name == "transformer":
            return TransformerTranslator(config, impl)
        return RNNTranslator(config, impl, attention=(name == "bahdanau"))
    except NotImplementedError as err:
        raise NotImplementedError(
            f"cannot build the {name} model from {getattr(impl, '__name__', impl)!r}: {err} is not "
            "implemented yet; finish that exercise (and pass the grader) first"
        ) from err
