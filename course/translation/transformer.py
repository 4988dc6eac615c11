"""The Transformer translator, built from the learner's (or the reference) blocks of exercises 5-7.

Two ways to decode one token at a time:
- through the blocks (always in training; for a model built from a learner's
  package): each TransformerDecoderBlock caches its inputs at the earlier
  positions (exercise 7's `state[2]`) and projects them to keys and values
  again at every step, and the cross-attention projects the encoder outputs
  again at every step;
- with a key/value cache (`use_kv_cache(True)`, eval only; the app's and the
  evaluation's reference models; TransformerDecoder's start_cache and
  forward_cached, which chapters 12 and 13 call too): the same parameters, but each position's
  self-attention keys and values are projected once and kept, and the
  encoder outputs are projected to cross-attention keys and values once per
  sentence. Same logits within float rounding (tests/test_kv_cache.py).
"""

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from .model_base import Translator, import_impl


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
    # the positional-encoding base given explicitly to the PositionalEncoding class (None: the class's default,
    # 10000 in the references); the grader's demo stage sets it for a learner whose exercise variant changed
    # the default (grader/variants.py), so that the trained weights still fit
    pe_base: int | None = None
    # the FFN's leaky-ReLU slope given explicitly to the Transformer blocks (None: the blocks' default, 0.0, the
    # ReLU, in the references); set by the demo stage like pe_base
    ffn_negative_slope: float | None = None

def positional_encoding(pe_mod, config):
    """pe_mod's PositionalEncoding for this model: with config.pe_base explicitly where it is set."""
    extra = {} if config.pe_base is None else {"base": config.pe_base}
    return pe_mod.PositionalEncoding(config.num_hiddens, config.dropout, config.max_len, **extra)


def ffn_slope(config):
    """The blocks' keyword for config.ffn_negative_slope where it is set, else none (the blocks' default)."""
    return {} if config.ffn_negative_slope is None else {"negative_slope": config.ffn_negative_slope}


def causal_mask(t0, T, device=None):
    """(T, t0+T) bool: new position t0+i sees every position up to itself (the decoder's causal mask)."""
    seen = torch.arange(t0 + T, device=device)  # (t0+T,)
    return seen[None, :] <= torch.arange(t0, t0 + T, device=device)[:, None]  # (T, t0+T)


class TransformerEncoder(nn.Module):
    """Embedding * sqrt(d) + positional encoding, then encoder blocks."""

    def __init__(self, config, pe_mod, tr_mod):
        super().__init__()
        c = config
        self.num_hiddens = c.num_hiddens
        self.embedding = nn.Embedding(c.src_vocab_size, c.num_hiddens)
        self.pos_encoding = positional_encoding(pe_mod, c)
        self.blks = nn.ModuleList(
            tr_mod.TransformerEncoderBlock(c.num_hiddens, c.ffn_num_hiddens, c.num_heads, c.dropout, **ffn_slope(c))
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
        self.num_hiddens, self.num_layers, self.max_len = c.num_hiddens, c.num_layers, c.max_len
        self.embedding = nn.Embedding(c.tgt_vocab_size, c.num_hiddens)
        self.pos_encoding = positional_encoding(pe_mod, c)
        self.blks = nn.ModuleList(
            tr_mod.TransformerDecoderBlock(c.num_hiddens, c.ffn_num_hiddens, c.num_heads, c.dropout, i, **ffn_slope(c))
            for i in range(c.num_layers)
        )
        self.dense = nn.Linear(c.num_hiddens, c.tgt_vocab_size)
        if c.tie_embeddings:  # one (V, d) matrix embeds a character and scores it as the next one
            nn.init.normal_(self.embedding.weight, 0.0, c.num_hiddens ** -0.5)  # x sqrt(d) in forward: unit scale
            self.dense.weight = self.embedding.weight
        self.attention_weights = [[None, None] for _ in range(c.num_layers)]  # [self, cross] per block
        self._positions = None  # the positional table without dropout, for the key/value cache

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

    def position_table(self, device, dtype):
        """(max_len, d): the positional encoding added at each position (eval: no dropout)."""
        table = self._positions
        if table is None or table.device != device or table.dtype != dtype:
            was_training = self.pos_encoding.training
            self.pos_encoding.eval()
            with torch.no_grad():
                zeros = torch.zeros(1, self.max_len, self.num_hiddens, device=device)  # (1, max_len, d)
                table = self.pos_encoding(zeros)[0].to(dtype)  # (max_len, d)
            self.pos_encoding.train(was_training)
            self._positions = table  # (max_len, d)
        return table

    # ---- decoding with the key/value cache (eval only; see the module docstring)

    @staticmethod
    def split_heads(X, num_heads):
        """(B, T, d) -> (B, heads, T, d / heads): exercise 5's transpose_qkv with the heads on their own axis.
        A view, not transpose_qkv's copy: a copy changes the float rounding of the matrix products after it, and
        so the shipped decoding numbers (tests/test_kv_cache.py)."""
        B, T, d = X.shape
        return X.reshape(B, T, num_heads, d // num_heads).transpose(1, 2)  # (B, heads, T, d/heads)

    @staticmethod
    def merge_heads(X):
        """(B, heads, T, d / heads) -> (B, T, d): exercise 5's transpose_output."""
        return X.transpose(1, 2).flatten(2)  # (B, T, d)

    def attend_cached(self, mha, queries, keys, values, mask):
        """mha's attention of its projected queries over already projected keys and values (B, G, T_k, dh),
        where mask (bool, broadcast to (B, heads, T, T_k)) allows -> (output (B, T, d), weights).

        G is mha's number of heads, or fewer (grouped-query attention, course.translation.kv_study): each key/value
        head is then shared by heads / G consecutive query heads."""
        q = self.split_heads(mha.W_q(queries), mha.num_heads)  # (B, heads, T, dh)
        group = mha.num_heads // keys.shape[1]
        if group > 1:  # query head h reads key/value head h // group
            keys = keys.repeat_interleave(group, dim=1)  # (B, heads, T_k, dh)
            values = values.repeat_interleave(group, dim=1)  # (B, heads, T_k, dh)
        scores = q @ keys.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (B, heads, T, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # (B, heads, T, T_k)
        return mha.W_o(self.merge_heads(weights @ values)), weights  # (B, T, d)

    def start_cache(self, enc_outputs, enc_valid_lens):
        """A KVState: every block's cross-attention keys and values, projected once."""
        cross = []
        for blk in self.blks:
            mha = blk.attention2
            cross.append((self.split_heads(mha.W_k(enc_outputs), mha.num_heads),
                          self.split_heads(mha.W_v(enc_outputs), mha.num_heads)))  # (B, heads, T_src, dh) each
        return KVState(enc_valid_lens, cross)

    def self_kv(self, i, X):
        """Block i's self-attention keys and values of the positions X (B, T, d): (B, heads, T, dh) each."""
        mha = self.blks[i].attention1
        return self.split_heads(mha.W_k(X), mha.num_heads), self.split_heads(mha.W_v(X), mha.num_heads)

    def forward_cached(self, X, state, self_mask=causal_mask, project_kv=None):
        """X (B, T) new target tokens -> logits (B, T, V) with the key/value cache; the state grows by T.

        self_mask(t0, T, device) -> (T, t0+T) bool: which keys each new position's self-attention sees
        (causal_mask; chapter 13 passes a sliding window). project_kv(i, X) -> block i's self-attention keys and
        values of the new positions, (B, G, T, dh) each (default self_kv, every head; chapter 12's grouped-query
        attention passes G pooled heads)."""
        project_kv = project_kv or self.self_kv
        B, T = X.shape
        t0 = state.offset
        X = self.embedding(X) * math.sqrt(self.num_hiddens)  # (B, T, d)
        X = X + self.position_table(X.device, X.dtype)[t0 : t0 + T]  # (B, T, d)
        causal = self_mask(t0, T, X.device)  # (T, t0+T)
        src_mask = None
        if state.enc_valid_lens is not None:
            T_src = state.cross[0][0].shape[2]
            src_mask = torch.arange(T_src, device=X.device)[None, :] < state.enc_valid_lens[:, None]  # (B, T_src)
            src_mask = src_mask[:, None, None, :]  # (B, 1, 1, T_src)
        new_kv = []
        for i, blk in enumerate(self.blks):
            k, v = project_kv(i, X)  # (B, G, T, dh) each
            if state.self_kv:
                k = torch.cat((state.self_kv[i][0], k), dim=2)  # (B, G, t0+T, dh)
                v = torch.cat((state.self_kv[i][1], v), dim=2)
            new_kv.append((k, v))
            out, w_self = self.attend_cached(blk.attention1, X, k, v, causal)
            Y = blk.addnorm1(X, out)  # (B, T, d)
            out, w_cross = self.attend_cached(blk.attention2, Y, *state.cross[i], src_mask)
            Z = blk.addnorm2(Y, out)  # (B, T, d)
            X = blk.addnorm3(Z, blk.ffn(Z))  # (B, T, d)
            self.attention_weights[i] = [w_self, w_cross]
        state.self_kv, state.offset = new_kv, t0 + T
        return self.dense(X), state  # (B, T, V)


@dataclass
class KVState:
    """Decoder state with projected keys and values (eval decoding only)."""

    enc_valid_lens: object  # (B,) or None
    cross: list  # per block: (keys, values) of the encoder outputs, each (B, heads, T_src, d/heads)
    self_kv: list = field(default_factory=list)  # per block: (keys, values) so far, (B, heads, t, d/heads)
    offset: int = 0  # target positions already decoded

    def select(self, index):
        """Batch rows `index` of every tensor (beam search)."""
        pick = [(k[index], v[index]) for k, v in self.cross]
        kv = [(k[index], v[index]) for k, v in self.self_kv]
        lens = None if self.enc_valid_lens is None else self.enc_valid_lens[index]
        return KVState(lens, pick, kv, self.offset)


class TransformerTranslator(Translator):
    """Transformer encoder-decoder from PositionalEncoding and the ex07 blocks."""

    def __init__(self, config, impl="solutions"):
        super().__init__()
        self.config = config
        pe_mod = import_impl(impl, "ex06_positional_encoding")
        tr_mod = import_impl(impl, "ex07_transformer")
        self.encoder = TransformerEncoder(config, pe_mod, tr_mod)
        self.decoder = TransformerDecoder(config, pe_mod, tr_mod)
        self.kv_cache = False  # decode with projected keys/values kept (see the module docstring)

    def use_kv_cache(self, on=True):
        """Decode (in eval mode) with the key/value cache, or through the blocks; returns self."""
        self.kv_cache = bool(on)
        return self

    def forward(self, src, src_valid_lens, tgt_in):
        """Teacher-forced logits (B, T_tgt, V), always through the blocks (causal inside them)."""
        state = self.decoder.init_state(self.encoder(src, src_valid_lens), src_valid_lens)
        logits, _ = self.decoder(tgt_in, state)
        return logits

    def encode(self, src, src_valid_lens):
        """Source (B, T_src) -> decoder state (a KVState when decoding with the cache)."""
        enc_outputs = self.encoder(src, src_valid_lens)  # (B, T_src, d)
        if self.kv_cache and not self.training:
            return self.decoder.start_cache(enc_outputs, src_valid_lens)
        return self.decoder.init_state(enc_outputs, src_valid_lens)

    def decode_step(self, tokens, state):
        """tokens (B, 1) -> logits (B, V), state, cross and self attention (B, layers, heads, .)."""
        if isinstance(state, KVState):
            logits, state = self.decoder.forward_cached(tokens, state)  # (B, 1, V)
        else:
            logits, state = self.decoder(tokens, state)  # (B, 1, V)
        attn = {}
        weights = self.decoder.attention_weights
        if all(w is not None for pair in weights for w in pair):
            attn["self"] = torch.stack([w[0][:, :, -1] for w in weights], dim=1)  # (B, L, heads, t)
            attn["cross"] = torch.stack([w[1][:, :, -1] for w in weights], dim=1)  # (B, L, heads, T_src)
        return logits[:, -1], state, attn

    def reorder_state(self, state, index):
        """Keep batch rows `index` of the encoder outputs, lengths and caches."""
        if isinstance(state, KVState):
            return state.select(index)
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
