# style: batch-first loop, lists, explicit deep-output helper
# bug: Seq2SeqAttentionDecoder.forward | the deep output concatenates (contexts, outputs, embeddings) instead of (outputs, contexts, embeddings), so deep_output sees its input columns in the wrong order
# expect: Seq2SeqAttentionDecoder.forward | order outputs contexts embeddings
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


    def _readout(self, dec_outputs, contexts, embeddings):
        features = torch.cat([contexts, dec_outputs, embeddings], dim=-1)
        return self.dense(torch.tanh(self.deep_output(features)))

    def forward(self, X, state):
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state).

        For each target step: query = top layer of the previous hidden state,
        context from the attention, one GRU step on [context, embedding].
        """
        enc_outputs, hidden_state, enc_valid_lens = state
        embeddings = self.embedding(X)
        dec_outputs, contexts, weights = [], [], []
        for t in range(X.shape[1]):
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            gru_in = torch.cat([context, embeddings[:, t:t + 1, :]], dim=-1)
            output, hidden_state = self.rnn(gru_in, hidden_state)
            dec_outputs.append(output)
            contexts.append(context)
            weights.append(self.attention.attention_weights)
        self.attention_weights = torch.cat(weights, dim=1)
        logits = self._readout(torch.cat(dec_outputs, dim=1), torch.cat(contexts, dim=1), embeddings)
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
