# style: d2l-like, time-major embeddings, for x in X loop
# bug: Seq2SeqAttentionDecoder.forward | the embeddings are permuted to time-major (T_tgt, B, E) for the loop and concatenated in that layout into the deep output, so torch.cat fails whenever B != T_tgt (and mixes batch and time when B == T_tgt)
# expect: Seq2SeqAttentionDecoder.forward | embeddings (B, T_tgt, E)
"""Exercise 4: the Bahdanau attention decoder (chapter 4, "Bahdanau attention,
computed by hand").

The encoder (course.translation.rnn.Seq2SeqEncoder, given) turns a source sentence
into outputs (B, T_src, H) and a final hidden state (num_layers, B, H).
At every target step this decoder asks "which source words matter now?".
"""

import torch
from torch import nn

from .ex03_scoring import AdditiveAttention


class Seq2SeqAttentionDecoder(nn.Module):
    """GRU decoder that attends over the encoder outputs at each step."""

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
        """Decoder state from the encoder: (outputs, hidden, valid_lens). Given."""
        outputs, hidden_state = enc_outputs  # (B, T_src, H), (num_layers, B, H)
        return (outputs, hidden_state, enc_valid_lens)


    def forward(self, X, state):
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state)."""
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)            # (T_tgt, B, E)
        outputs, contexts, self._attention_weights = [], [], []
        for x in X:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x, hidden_state)
            outputs.append(out)
            contexts.append(context)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = torch.cat(outputs, dim=1)
        contexts = torch.cat(contexts, dim=1)
        self.attention_weights = torch.cat(self._attention_weights, dim=1)
        outputs = self.deep_output(torch.cat((outputs, contexts, X), dim=-1))
        outputs = self.dense(torch.tanh(outputs))
        return outputs, (enc_outputs, hidden_state, enc_valid_lens)
