# style: helper methods, d2l-style training switch for the causal lengths
# bug: TransformerDecoderBlock.forward | builds the causal valid lengths only when self.training and passes None in eval mode (the d2l shortcut), so a whole target sequence given at once in eval mode attends to later positions
# expect: TransformerDecoderBlock.forward | causal in eval mode
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
        residual_sum = X + self.dropout(Y)
        return self.ln(residual_sum)


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
        ffn_out = self.ffn(Y)
        return self.addnorm2(Y, ffn_out)


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

    def _cached_inputs(self, X, caches):
        previous = caches[self.i]
        if previous is None:
            return X, 0
        return torch.cat([previous, X], dim=1), previous.size(1)

    @staticmethod
    def _causal_lengths(batch_size, num_new, num_past, device):
        lengths = torch.arange(num_past + 1, num_past + num_new + 1, device=device)
        return lengths.unsqueeze(0).expand(batch_size, num_new)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens, caches = state
        key_values, num_past = self._cached_inputs(X, caches)
        caches[self.i] = key_values
        if self.training:
            lens = self._causal_lengths(X.size(0), X.size(1), num_past, X.device)
        else:
            lens = None
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state
