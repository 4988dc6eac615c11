# style: match statement (Python 3.10+), per-branch handling of n == 1
# bug: max_path_length | self-attention returns 1 even when n == 1 (the n == 1 -> 0 rule is only applied in the rnn and cnn branches)
# expect: max_path_length | n == 1 gives 0
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
        raise ValueError("kernel_size must be >= 1")
    dilations = [1] * num_layers if dilations is None else dilations
    if len(dilations) != num_layers:
        raise ValueError("len(dilations) must equal num_layers")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions.

    - "rnn": n - 1 (one position per step)
    - "cnn": the fewest stacked layers whose receptive field covers n
      (dilations 1, 2, 4, ... when `dilated`, else all 1)
    - "self-attention": 1 (every pair is connected directly)
    Any architecture with n == 1 gives 0. Raise ValueError for an unknown
    architecture, n < 1 or kernel_size < 2.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    if kernel_size < 2:
        raise ValueError("kernel_size must be >= 2")
    match architecture:
        case "rnn":
            return max(n - 1, 0)
        case "self-attention":
            return 1
        case "cnn":
            depth = 0
            while True:
                dils = [2 ** i for i in range(depth)] if dilated else None
                if receptive_field(kernel_size, depth, dils) >= n:
                    return depth
                depth += 1
        case _:
            raise ValueError(f"unknown architecture {architecture!r}")
