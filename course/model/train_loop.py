"""The one training loop: every model the course trains takes its optimizer steps here.

`train_steps` runs the steps and hands each one back as it is done (a generator): the caller's loop body is its
callback, where it logs, averages, snapshots, validates, saves or reports progress. What differs between the
course's trainings goes in as arguments: where the batches come from (an iterator, drawn lazily, one per step),
how a batch becomes a loss, the learning rate of each step, gradient-norm clipping, and a question asked before
every step that can end training early (a stop file, a time box).

Each step does, in this order: set the learning rate (when lr_at is given), the forward pass and loss
(loss_fn), zero the gradients, backward, clip (when clip is given), the optimizer step. The random draws a step
makes are therefore the caller's batch and its model's forward pass (dropout), in that order, as in every loop
this one replaced: the shipped results reproduce (tests/test_training_golden.py).
"""

from dataclasses import dataclass

from torch import nn


@dataclass
class Step:
    """One optimizer step, done."""

    index: int  # the step's number (the first is `start`, 0 unless resumed)
    loss: object  # the loss tensor the step followed (its graph already freed by backward)
    batch: object  # the batch it was computed on
    output: object  # whatever else loss_fn returned (logits, masks: what the caller logs)


def set_learning_rate(optimizer, lr):
    """Every parameter group's learning rate set to lr."""
    for group in optimizer.param_groups:
        group["lr"] = lr


def optimizer_step(model, optimizer, loss, clip=None):
    """Gradients of loss, clipped to norm `clip` (None: not clipped), then one optimizer step."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()


def train_steps(model, optimizer, batches, loss_fn, clip=None, lr_at=None, should_stop=None, start=0):
    """Yield a Step after every optimizer step, until `batches` runs out or should_stop() says True.

    batches: an iterable of batches, one taken per step (lazily: a generator may read the caller's state);
    loss_fn(batch) -> loss, or (loss, output); lr_at(index) -> the step's learning rate (None: the optimizer's
    own); should_stop() is asked before each step's batch is taken; start: the first step's index (a resumed run).
    """
    batches = iter(batches)
    index = start
    while not (should_stop and should_stop()):
        batch = next(batches, _END)
        if batch is _END:
            return
        if lr_at is not None:
            set_learning_rate(optimizer, lr_at(index))
        loss, output = _split(loss_fn(batch))
        optimizer_step(model, optimizer, loss, clip)
        yield Step(index, loss, batch, output)
        index += 1


_END = object()  # batches is exhausted


def _split(result):
    """loss_fn's result as (loss, output): a bare loss has output None."""
    return result if isinstance(result, tuple) else (result, None)
