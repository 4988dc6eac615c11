# style: explicit unpacking, nested sub-layer calls, 1-D causal lengths
# bug: TransformerDecoderBlock.forward | the causal lengths stay 1-D (T,), which MultiHeadAttention reads as one length per example: raises whenever T != B (e.g. one token at a time with B > 1), and is wrong (not per query) when T == B
# expect: TransformerDecoderBlock.forward | (B, T)
"""Exercise 7: the Transformer's building blocks (chapter 7, "The Transformer")."""

import torch
from torch import nn

from .ex05_multihead import MultiHeadAttention


class PositionWiseFFN(nn.Module):
    """The same two-layer MLP applied to every position independently."""

    def __init__(self, num_inputs, ffn_num_hiddens, num_outputs, negative_slope=0.0):
        super().__init__()
        self.dense1 = nn.Linear(num_inputs, ffn_num_hiddens)
        self.relu = nn.LeakyReLU(negative_slope)  # negative_slope 0: the ReLU
        self.dense2 = nn.Linear(ffn_num_hiddens, num_outputs)
    def forward(self, X):
        hidden = self.dense1(X)
        hidden = self.relu(hidden)
        return self.dense2(hidden)


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)
    def forward(self, X, Y):
        residual = X + self.dropout(Y)
        return self.ln(residual)


class TransformerEncoderBlock(nn.Module):
    """Self-attention and FFN sub-layers, each with AddNorm."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False, negative_slope=0.0):
        super().__init__()
        self.attention = MultiHeadAttention(
            num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, dropout, use_bias
        )
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens, negative_slope)
        self.addnorm2 = AddNorm(num_hiddens, dropout)
    def forward(self, X, valid_lens):
        attended = self.attention(X, X, X, valid_lens)
        Y = self.addnorm1(X, attended)
        return self.addnorm2(Y, self.ffn(Y))


class TransformerDecoderBlock(nn.Module):
    """Causal self-attention, encoder-decoder attention and FFN, each with AddNorm."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i, negative_slope=0.0):
        super().__init__()
        self.i = i  # this block's index into the state's caches
        self.attention1 = MultiHeadAttention(
            num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, dropout
        )
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = MultiHeadAttention(
            num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, dropout
        )
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens, negative_slope)
        self.addnorm3 = AddNorm(num_hiddens, dropout)
    def forward(self, X, state):
        enc_outputs, enc_valid_lens, caches = state
        cached = caches[self.i]
        key_values = X if cached is None else torch.cat([cached, X], dim=1)
        caches[self.i] = key_values
        B, T, _ = X.shape
        T_kv = key_values.shape[1]
        lens = torch.arange(T_kv - T + 1, T_kv + 1, device=X.device)  # (T,)
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state
