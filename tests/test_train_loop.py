"""course.model.train_loop: the one training loop's order of operations, its stop question and its indices."""

import torch
from torch import nn

from course.model.train_loop import train_steps


def _model_and_data(seed=0):
    torch.manual_seed(seed)
    model = nn.Linear(3, 2)
    gen = torch.Generator().manual_seed(seed)
    batches = [(torch.randn(4, 3, generator=gen), torch.randn(4, 2, generator=gen)) for _ in range(5)]  # (4, 3), (4, 2)
    return model, batches


def _loss(model):
    return lambda batch: ((model(batch[0]) - batch[1]) ** 2).mean()


def test_the_steps_are_a_plain_adam_loop_with_clipping_and_a_schedule():
    model, batches = _model_and_data()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    done = list(train_steps(model, opt, batches, _loss(model), clip=0.5, lr_at=lambda i: 0.1 / (i + 1)))
    by_hand, _ = _model_and_data()
    opt2 = torch.optim.Adam(by_hand.parameters(), lr=0.1)
    losses = []
    for i, (x, y) in enumerate(batches):
        opt2.param_groups[0]["lr"] = 0.1 / (i + 1)
        loss = ((by_hand(x) - y) ** 2).mean()
        opt2.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(by_hand.parameters(), 0.5)
        opt2.step()
        losses.append(loss.item())
    assert [d.index for d in done] == [0, 1, 2, 3, 4]
    assert [d.loss.item() for d in done] == losses
    assert torch.equal(model.weight, by_hand.weight) and torch.equal(model.bias, by_hand.bias)
    assert opt.param_groups[0]["lr"] == 0.1 / 5


def test_should_stop_is_asked_before_each_batch_is_taken():
    model, batches = _model_and_data()
    taken, asked = [], []

    def lazily():
        for b in batches:
            taken.append(len(taken))
            yield b

    def stop():
        asked.append(len(taken))
        return len(asked) > 2

    done = list(train_steps(model, torch.optim.SGD(model.parameters(), lr=0.1), lazily(), _loss(model),
                            should_stop=stop))
    assert len(done) == 2 and taken == [0, 1] and asked == [0, 1, 2]


def test_a_resumed_run_counts_on_and_the_extra_output_comes_back():
    model, batches = _model_and_data()
    loss = _loss(model)
    done = list(train_steps(model, torch.optim.SGD(model.parameters(), lr=0.1), batches[:2],
                            lambda b: (loss(b), "seen"), start=7))
    assert [(d.index, d.output) for d in done] == [(7, "seen"), (8, "seen")]
    assert done[0].batch is batches[0]
