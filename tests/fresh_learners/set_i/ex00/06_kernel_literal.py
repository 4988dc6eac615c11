# style: compact, closed form for plain stacks, loop for dilated
# bug: max_path_length | the cnn branch calls receptive_field(3, ...) with a literal 3 instead of kernel_size, so any other kernel size gives the kernel-3 depth
# expect: max_path_length | kernel_size literal 3
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size < 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("len(dilations) != num_layers")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(architecture)
    if n < 1 or kernel_size < 2:
        raise ValueError("bad n or kernel_size")
    if n == 1:
        return 0
    if architecture == "self-attention":
        return 1
    if architecture == "rnn":
        return n - 1
    L = 0
    while receptive_field(3, L, [2 ** i for i in range(L)] if dilated else None) < n:
        L += 1
    return L
