# style: functional calls
# bug: TransformerEncoderBlock.forward | feeds the block input X to the FFN instead of Y: addnorm2(Y, ffn(X))
# expect: TransformerEncoderBlock.forward | ffn(Y)
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
        h = nn.functional.linear(X, self.dense1.weight, self.dense1.bias)
        h = nn.functional.leaky_relu(h, self.relu.negative_slope)
        return nn.functional.linear(h, self.dense2.weight, self.dense2.bias)


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        S = X + self.dropout(Y)
        return nn.functional.layer_norm(S, self.ln.normalized_shape, self.ln.weight, self.ln.bias, self.ln.eps)


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
        out = self.ffn(X)
        return self.addnorm2(Y, out)


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
        prev = caches[self.i]
        kv = X if prev is None else torch.cat([prev, X], dim=1)
        state[2][self.i] = kv
        B, T = X.shape[0], X.shape[1]
        n_prev = 0 if prev is None else prev.shape[1]
        lens = (n_prev + torch.arange(1, T + 1, device=X.device)).unsqueeze(0).expand(B, T)
        Y = self.addnorm1(X, self.attention1(X, kv, kv, lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state
