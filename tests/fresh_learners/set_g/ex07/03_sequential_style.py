# style: nn.Sequential-like chaining and a python list for the lengths
# bug: none
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
        out = X
        for layer in (self.dense1, self.relu, self.dense2):
            out = layer(out)
        return out


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        residual = torch.add(X, self.dropout(Y))
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
        sub1 = lambda x: self.attention(x, x, x, valid_lens)
        X = self.addnorm1(X, sub1(X))
        return self.addnorm2(X, self.ffn(X))


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
        enc_outputs = state[0]
        enc_valid_lens = state[1]
        cached = state[2][self.i]
        key_values = X if cached is None else torch.cat((cached, X), 1)
        state[2][self.i] = key_values
        offset = key_values.shape[1] - X.shape[1]
        rows = [[offset + t + 1 for t in range(X.shape[1])] for _ in range(X.shape[0])]
        dec_valid_lens = torch.tensor(rows, device=X.device)
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state
