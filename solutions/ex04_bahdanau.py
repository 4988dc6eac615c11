"""Exercise 4: the Bahdanau attention decoder (chapter 4).

At every target step the decoder asks "which source words matter now?": the
query is the top GRU layer's previous hidden state, the keys and values are the
encoder's outputs, and the resulting context is fed to the GRU together with
the embedding of the current input token. The output layer reads the context
too ("deep output", as in Bahdanau et al. 2014): each prediction sees the GRU's
new output, the context and the input token's embedding, mixed by a tanh layer.
"""

import torch
from torch import nn

from .ex03_scoring import AdditiveAttention


class Seq2SeqAttentionDecoder(nn.Module):
    """GRU decoder that attends over the encoder outputs at each step.

    temperature goes to AdditiveAttention (every score divided by it): 1.0 in the published exercise; a class
    variant gives each learner their own default (course/common/exercise_variants.py)."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, temperature=1.0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout, temperature)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout, batch_first=True
        )
        self.deep_output = nn.Linear(2 * num_hiddens + embed_size, num_hiddens)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        """Decoder state from the encoder: (outputs, hidden, valid_lens)."""
        outputs, hidden_state = enc_outputs  # (B, T_src, H), (num_layers, B, H)
        return (outputs, hidden_state, enc_valid_lens)

    def forward(self, X, state):
        """X (B, T_tgt) token ids -> logits (B, T_tgt, vocab), new state."""
        enc_outputs, hidden_state, enc_valid_lens = state
        embs = self.embedding(X)  # (B, T_tgt, E)
        step_outputs, step_contexts, step_weights = [], [], []
        for t in range(X.shape[1]):
            query = hidden_state[-1].unsqueeze(1)  # (B, 1, H): top layer, previous step
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, H)
            rnn_input = torch.cat((context, embs[:, t : t + 1]), dim=-1)  # (B, 1, H + E)
            out, hidden_state = self.rnn(rnn_input, hidden_state)  # (B, 1, H), (L, B, H)
            step_outputs.append(out)
            step_contexts.append(context)
            step_weights.append(self.attention.attention_weights)  # (B, 1, T_src)
        outputs = torch.cat(step_outputs, dim=1)  # (B, T_tgt, H)
        contexts = torch.cat(step_contexts, dim=1)  # (B, T_tgt, H)
        features = torch.tanh(self.deep_output(torch.cat((outputs, contexts, embs), dim=-1)))  # (B, T_tgt, H)
        logits = self.dense(features)  # (B, T_tgt, vocab)
        self.attention_weights = torch.cat(step_weights, dim=1)  # (B, T_tgt, T_src)
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
