# style: functional leaky_relu with the module's slope, lengths built from a python list
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
        return self.dense2(nn.functional.leaky_relu(self.dense1(X), self.relu.negative_slope))


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)
    def forward(self, X, Y):
        Y = self.dropout(Y)
        return self.ln(torch.add(X, Y))


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
        out = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        out = self.addnorm2(out, self.ffn(out))
        return out


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
        past_inputs = state[2][self.i]
        n_past = 0 if past_inputs is None else past_inputs.shape[1]
        key_values = X if past_inputs is None else torch.cat((past_inputs, X), 1)
        state[2][self.i] = key_values
        B, T = X.shape[0], X.shape[1]
        lens = torch.tensor([[n_past + t + 1 for t in range(T)] for _ in range(B)], device=X.device)
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state
