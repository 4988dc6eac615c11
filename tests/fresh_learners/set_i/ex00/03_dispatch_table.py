# style: dispatch dict of small helper functions, generator for dilations
# bug: none
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

import itertools

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Number of input positions one output of stacked 1-D convolutions sees.

    Stride-1 convolutions of width `kernel_size`; layer l has dilation
    dilations[l] (all 1 when dilations is None):

        R = 1 + (kernel_size - 1) * sum(dilations)

    Example: kernel_size=3, num_layers=4 -> 9.
    Raise ValueError when kernel_size < 1 or len(dilations) != num_layers.
    """
    dils = [1] * num_layers if dilations is None else list(dilations)
    if kernel_size < 1 or len(dils) != num_layers:
        raise ValueError("bad kernel_size or dilations")
    return 1 + (kernel_size - 1) * sum(dils)


def _rnn(n, k, dilated):
    return n - 1


def _attention(n, k, dilated):
    return 1


def _cnn(n, k, dilated):
    covered = 1
    for layer in itertools.count(1):
        dilation = 2 ** (layer - 1) if dilated else 1
        covered += (k - 1) * dilation
        if covered >= n:
            return layer


_PATHS = {"rnn": _rnn, "cnn": _cnn, "self-attention": _attention}


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions.

    - "rnn": n - 1 (one position per step)
    - "cnn": the fewest stacked layers whose receptive field covers n
      (dilations 1, 2, 4, ... when `dilated`, else all 1)
    - "self-attention": 1 (every pair is connected directly)
    Any architecture with n == 1 gives 0. Raise ValueError for an unknown
    architecture, n < 1 or kernel_size < 2.

    The default kernel_size is 3 in the published exercise. In a class your
    exercise variant gives you your own default (the Practice page and
    `python -m grader --variant N` show it): write it as the default of
    kernel_size here; the grader calls max_path_length without it where a
    check leaves it out.
    """
    fn = _PATHS.get(architecture)
    if fn is None:
        raise ValueError(f"architecture must be one of {ARCHITECTURES}")
    if n < 1:
        raise ValueError("n < 1")
    if kernel_size < 2:
        raise ValueError("kernel_size < 2")
    return 0 if n == 1 else fn(n, kernel_size, dilated)
