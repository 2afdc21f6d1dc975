"""A character-level GRU model in the shape of the classic char-rnn tutorials (batch_first)."""
import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, n_chars, hidden_size, n_layers=2, dropout=0.1):
        super().__init__()
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.embed = nn.Embedding(n_chars, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers, batch_first=True, dropout=dropout)
        self.fc = nn.Linear(hidden_size, n_chars)

    def forward(self, x, hidden=None):
        out, hidden = self.gru(self.embed(x), hidden)
        logits = self.fc(out.reshape(-1, self.hidden_size))
        return logits.view(x.size(0), x.size(1), -1), hidden

    def init_hidden(self, batch_size):
        return torch.zeros(self.n_layers, batch_size, self.hidden_size)


def build():
    return CharRNN(n_chars=30, hidden_size=20).eval()


def example_inputs(rng):
    return [rng.integers(0, 30, (2, 9)).astype("int64")]


def run(model, chars):
    logits, hidden = model(chars, model.init_hidden(chars.size(0)))
    probs = torch.softmax(logits[:, -1] / 0.8, dim=-1)
    return logits, hidden, probs
