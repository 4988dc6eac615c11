# style: helper functions and a dispatch table
# bug: max_path_length | returns 1 for self-attention before the n == 1 check, so self-attention with n == 1 gives 1 instead of 0
# expect: max_path_length | n == 1
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Number of input positions one output of stacked 1-D convolutions sees.

    Stride-1 convolutions of width `kernel_size`; layer l has dilation
    dilations[l] (all 1 when dilations is None):

        R = 1 + (kernel_size - 1) * sum(dilations)

    Example: kernel_size=3, num_layers=4 -> 9.
    Raise ValueError when kernel_size < 1 or len(dilations) != num_layers.
    """
    if kernel_size < 1:
        raise ValueError(f"kernel_size must be >= 1, got {kernel_size}")
    dils = list(dilations) if dilations is not None else [1 for _ in range(num_layers)]
    if len(dils) != num_layers:
        raise ValueError(f"expected {num_layers} dilations, got {len(dils)}")
    return 1 + (kernel_size - 1) * sum(dils)


def _dilation_schedule(num_layers, dilated):
    return [2**i if dilated else 1 for i in range(num_layers)]


def _cnn_path(n, kernel_size, dilated):
    num_layers = 1
    while receptive_field(kernel_size, num_layers, _dilation_schedule(num_layers, dilated)) < n:
        num_layers += 1
    return num_layers


_PATHS = {
    "rnn": lambda n, k, dil: n - 1,
    "cnn": _cnn_path,
    "self-attention": lambda n, k, dil: 1,
}


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions.

    - "rnn": n - 1 (one position per step)
    - "cnn": the fewest stacked layers whose receptive field covers n
      (dilations 1, 2, 4, ... when `dilated`, else all 1)
    - "self-attention": 1 (every pair is connected directly)
    Any architecture with n == 1 gives 0. Raise ValueError for an unknown
    architecture, n < 1 or kernel_size < 2.
    """
    if architecture not in _PATHS:
        raise ValueError(f"unknown architecture: {architecture}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if kernel_size < 2:
        raise ValueError(f"kernel_size must be >= 2, got {kernel_size}")
    if architecture == "self-attention":
        return 1
    if n == 1:
        return 0
    return _PATHS[architecture](n, kernel_size, dilated)
