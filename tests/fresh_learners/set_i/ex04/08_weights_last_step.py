# style: batch-first loop, torch.stack on squeezed steps
# bug: Seq2SeqAttentionDecoder.forward | self.attention_weights is set to the attention module's weights after the loop, i.e. only the last step's (B, 1, T_src), instead of all steps stacked to (B, T_tgt, T_src)
# expect: Seq2SeqAttentionDecoder.forward | weights of every step
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
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state).

        Store the weights of every step in self.attention_weights, shape
        (B, T_tgt, T_src).
        """
        enc_outputs, hidden_state, enc_valid_lens = state
        embs = self.embedding(X)
        outputs, contexts = [], []
        for t in range(X.shape[1]):
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            step_in = torch.cat((context, embs[:, t, :].unsqueeze(1)), dim=-1)
            out, hidden_state = self.rnn(step_in, hidden_state)
            outputs.append(out.squeeze(1))
            contexts.append(context.squeeze(1))
        self.attention_weights = self.attention.attention_weights
        outputs = torch.stack(outputs, dim=1)
        contexts = torch.stack(contexts, dim=1)
        logits = self.dense(torch.tanh(self.deep_output(torch.cat((outputs, contexts, embs), dim=-1))))
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
