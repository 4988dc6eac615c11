"""The training recipe the checkpoints record: the learning-rate schedule, label smoothing, the weight average.

Streamlit-free. The schedule is training.lr_factor itself and the smoothed loss
training.sequence_loss itself, so what chapter 7 draws is what the training command ran.
"""

import pandas as pd
import torch
import torch.nn.functional as F

from .training import lr_factor, sequence_loss
from .vocab import PAD_ID

RECIPE_KEYS = ("lr", "warmup", "label_smoothing", "ema", "ema_start")


def recipe_of(train_settings, metrics):
    """{lr, warmup, label_smoothing, ema, ema_start, steps} from a checkpoint's `train` and `metrics`."""
    out = {key: train_settings[key] for key in RECIPE_KEYS}
    out["steps"] = int(metrics["steps"])
    return out


def schedule_frame(lr, warmup, steps, points=200):
    """Table (step, lr) of lr * lr_factor at `points` steps (always including the end of the warmup).

    The training command decays by elapsed time, not steps; at a steady speed the two agree,
    so progress is taken as step / steps."""
    marks = sorted({round(i * (steps - 1) / (points - 1)) for i in range(points)} | {max(warmup - 1, 0)})
    return pd.DataFrame({"step": marks, "lr": [lr * lr_factor(s, warmup, s / steps) for s in marks]})


def smoothed_target(num_classes, target, epsilon):
    """(num_classes,) the distribution a smoothed loss aims at: 1 - epsilon + epsilon / V on the target,
    epsilon / V on every other class (torch's label_smoothing)."""
    out = torch.full((num_classes,), epsilon / num_classes, dtype=torch.float64)  # (V,)
    out[target] += 1 - epsilon
    return out


def prediction(num_classes, target, p_target):
    """(num_classes,) a prediction with p_target on the target and the rest shared equally."""
    out = torch.full((num_classes,), (1 - p_target) / (num_classes - 1), dtype=torch.float64)  # (V,)
    out[target] = p_target
    return out


def losses(probs, target, epsilon):
    """(plain cross-entropy, smoothed cross-entropy) of one predicted distribution, with the training loss."""
    logits = probs.log().reshape(1, 1, -1)  # (B=1, T=1, V): softmax(log p) = p
    tgt = torch.tensor([[target]])  # (1, 1)
    return float(sequence_loss(logits, tgt)), float(sequence_loss(logits, tgt, epsilon))


def smoothing_table(num_classes, epsilon, confident=0.99, hedged=0.9, target=None):
    """Table (class, one_hot, smoothed, confident, hedged): the plain and the smoothed target and two
    predictions that agree on the answer, one sure of it and one hedging. The target is not <pad> (id 0)."""
    target = 1 if target is None else target
    if target == PAD_ID:
        raise ValueError("the target class cannot be the padding id 0, which the training loss ignores")
    one_hot = F.one_hot(torch.tensor(target), num_classes).double()  # (V,)
    return pd.DataFrame({"class": range(num_classes), "one_hot": one_hot.numpy(),
                         "smoothed": smoothed_target(num_classes, target, epsilon).numpy(),
                         "confident": prediction(num_classes, target, confident).numpy(),
                         "hedged": prediction(num_classes, target, hedged).numpy()})


def smoothing_losses(num_classes, epsilon, confident=0.99, hedged=0.9, target=1):
    """{name: (plain, smoothed)} losses of the confident and hedged predictions, and of the best a smoothed
    loss can reach (predicting the smoothed target itself), with that prediction's p on the target."""
    best = smoothed_target(num_classes, target, epsilon)
    return {"confident": losses(prediction(num_classes, target, confident), target, epsilon),
            "hedged": losses(prediction(num_classes, target, hedged), target, epsilon),
            "best": losses(best, target, epsilon), "best_p": float(best[target])}


def ema_recent_share(decay, steps):
    """Share of an exponential moving average's weight on the last `steps` updates: 1 - decay ** steps."""
    return 1 - decay ** steps


def ema_window(decay):
    """The average's characteristic window 1 / (1 - decay), in steps."""
    return 1 / (1 - decay)
