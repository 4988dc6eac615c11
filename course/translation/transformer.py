"""The Transformer translator, built from the learner's (or the reference) blocks of exercises 5-7."""

import math
from dataclasses import dataclass

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
