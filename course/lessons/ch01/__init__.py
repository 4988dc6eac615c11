"""Chapter 1 maths: path lengths, receptive fields and gradients through an RNN.

Pure functions (no Streamlit). Path lengths and receptive fields come from the
reference solution of exercise 0, so the page shows what the learner builds.
"""

import numpy as np
import pandas as pd
import torch

from solutions.ex00_paths import max_path_length, receptive_field

ARCHITECTURES = ("rnn", "cnn", "self-attention")
SCHEDULES = ("none", "doubling", "custom")


def path_steps(distance, kernel_size, dilated):
    """Steps linking two positions `distance` apart: {architecture: steps}."""
    if distance < 0:
        raise ValueError(f"distance must be non-negative, got {distance}")
    n = distance + 1  # the two positions and everything between them
    return {
        arch: max_path_length(arch, n, kernel_size=kernel_size, dilated=dilated)
        for arch in ARCHITECTURES
    }


def named_steps(steps, names):
    """Table (architecture, steps) with display names, for a bar chart."""
    return pd.DataFrame({"architecture": [names[a] for a in steps], "steps": list(steps.values())})


def path_table(max_distance, kernel_size, dilated, names=None):
    """Long table (distance, architecture, steps) for distances 1..max_distance.

    names optionally maps architecture ids to display names.
    """
    names = names or {}
    rows = [
        {"distance": d, "architecture": names.get(arch, arch), "steps": steps}
        for d in range(1, max_distance + 1)
        for arch, steps in path_steps(d, kernel_size, dilated).items()
    ]
    return pd.DataFrame(rows)


def parse_dilations(text, num_layers):
    """Dilations from text like '1, 2, 4'; a ValueError that says how to fix bad input."""
    parts = [p for p in str(text).replace(",", " ").split() if p]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise ValueError(
            f"could not read {text!r} as whole numbers; write dilations like '1, 2, 4, 8'"
        ) from None
    if len(values) != num_layers:
        raise ValueError(
            f"got {len(values)} dilations for {num_layers} layers; give exactly one per layer"
        )
    if any(v < 1 for v in values):
        raise ValueError("every dilation must be at least 1 (1 means no gaps)")
    return values


def dilation_schedule(schedule, num_layers, custom_text=""):
    """Per-layer dilations for a named schedule: none (1s), doubling (1, 2, 4...) or custom."""
    if schedule == "none":
        return [1] * num_layers
    if schedule == "doubling":
        return [2**layer for layer in range(num_layers)]
    if schedule == "custom":
        return parse_dilations(custom_text, num_layers)
    raise ValueError(f"unknown schedule {schedule!r}; use one of {SCHEDULES}")


def receptive_field_layers(kernel_size, dilations):
    """Table of layer, dilation and receptive field after that layer."""
    rows = [
        {"layer": layer, "dilation": d, "receptive_field": receptive_field(kernel_size, layer, list(dilations[:layer]))}
        for layer, d in enumerate(dilations, start=1)
    ]
    return pd.DataFrame(rows, columns=["layer", "dilation", "receptive_field"])


def receptive_cone(kernel_size, dilations):
    """0/1 matrix (layers + 1, R): which positions of each layer reach the last output.

    Row 0 is the top output, the last row the input; causal convolutions, so
    the output sits at the right end, position R - 1.
    """
    size = receptive_field(kernel_size, len(dilations), list(dilations))
    cone = np.zeros((len(dilations) + 1, size), dtype=int)  # (L + 1, R)
    reached = {size - 1}
    cone[0, size - 1] = 1
    for row, d in enumerate(reversed(dilations), start=1):
        reached = {p - j * d for p in reached for j in range(kernel_size)}
        cone[row, sorted(reached)] = 1
    return cone


def rnn_states(weight, inputs, h0, activation=torch.tanh):
    """States h_1..h_T of h_t = act(W h_{t-1} + x_t); returns [h_0, h_1, ..., h_T]."""
    states = [h0]
    for x in inputs:  # x: (H,)
        states.append(activation(weight @ states[-1] + x))  # (H,)
    return states


def jacobian_norms(weight, inputs, h0, activation=torch.tanh):
    """Spectral norms ||dh_T/dh_i|| for i = T..0, measured with autograd (index = T - i)."""
    num_hiddens = weight.shape[0]
    h0 = h0.clone().requires_grad_(True)
    states = rnn_states(weight, inputs, h0, activation)
    for h in states[1:]:
        h.retain_grad()
    last = states[-1]  # (H,)
    rows = []  # rows[k][i]: row k of dh_T/dh_i, (H,)
    for k in range(num_hiddens):
        grads = torch.autograd.grad(last[k], states, retain_graph=True, allow_unused=True)
        rows.append([torch.zeros(num_hiddens) if g is None else g for g in grads])
    norms = []
    for i in range(len(states)):
        jac = torch.stack([rows[k][i] for k in range(num_hiddens)])  # (H, H)
        norms.append(torch.linalg.matrix_norm(jac, ord=2).item())
    return norms[::-1]  # distance 0 (h_T itself) first


def random_rnn(scale, num_hiddens, num_steps, seed):
    """A seeded random tanh RNN: W = scale * N(0, 1/H), inputs and h_0 ~ N(0, 0.5^2)."""
    gen = torch.Generator().manual_seed(seed)
    weight = scale * torch.randn(num_hiddens, num_hiddens, generator=gen) / num_hiddens**0.5  # (H, H)
    inputs = 0.5 * torch.randn(num_steps, num_hiddens, generator=gen)  # (T, H)
    h0 = 0.5 * torch.randn(num_hiddens, generator=gen)  # (H,)
    return weight, inputs, h0


def measured_gradients(scale, num_hiddens=16, num_steps=40, seed=0):
    """Table (distance, norm) of ||dh_n/dh_i|| in a random tanh RNN, and ||W||_2."""
    weight, inputs, h0 = random_rnn(scale, num_hiddens, num_steps, seed)
    with torch.enable_grad():
        norms = jacobian_norms(weight, inputs, h0)
    table = pd.DataFrame({"distance": np.arange(num_steps + 1), "norm": norms})
    return table, torch.linalg.matrix_norm(weight, ord=2).item()


SOURCE_TOKENS = ("They", "are", "watching", ".")
TARGET_TOKENS = ("他们", "在", "看", "。", "<eos>")


def _quote(text):
    """A DOT string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def seq2seq_dot(labels, source=SOURCE_TOKENS, target=TARGET_TOKENS):
    """Graphviz DOT of the encoder-decoder data flow; labels: encoder, decoder, context.

    Drawn bottom-up in three rows (inputs, states, outputs) so that no arrow crosses another:
    the states form one chain h1 .. hn -> c -> s1 .. sm, and each decoder step gets its two
    inputs, the previous correct word and a copy of c, from the row below.
    """
    font = 'fontname="Noto Sans CJK SC, sans-serif", fontsize=12'
    lines = [
        "digraph seq2seq {",
        f"rankdir=BT; newrank=true; nodesep=0.15; ranksep=0.3; node [{font}, width=0.3, height=0.3, margin=0.06];",
        f"subgraph cluster_enc {{ label={_quote(labels['encoder'])}; {font.replace(',', ';')}; color=\"#4c78a8\";",
    ]
    for i, token in enumerate(source, start=1):
        lines.append(f"x{i} [label={_quote(token)}, shape=plaintext];")
        lines.append(f"h{i} [label=\"h{i}\", shape=box, style=filled, fillcolor=\"#dbe7f3\"];")
        lines.append(f"x{i} -> h{i};")
    lines.append("}")
    lines.append(f"c [label={_quote(labels['context'])}, shape=box, style=\"filled,rounded\", fillcolor=\"#f6d7a7\"];")
    lines.append(f"subgraph cluster_dec {{ label={_quote(labels['decoder'])}; {font.replace(',', ';')}; color=\"#e45756\";")
    inputs = ("<bos>",) + tuple(target[:-1])
    for t, (inp, out) in enumerate(zip(inputs, target), start=1):
        lines.append(f"in{t} [label={_quote(inp)}, shape=plaintext];")
        lines.append(f"c{t} [label=\"c\", shape=plaintext, fontcolor=\"#b07c1f\"];")
        lines.append(f"s{t} [label=\"s{t}\", shape=box, style=filled, fillcolor=\"#f8dcdc\"];")
        lines.append(f"out{t} [label={_quote(out)}, shape=plaintext];")
        lines.append(f"in{t} -> s{t}; c{t} -> s{t} [color=\"#b07c1f\"]; s{t} -> out{t};")
    lines.append("}")
    states = [f"h{i}" for i in range(1, len(source) + 1)] + ["c"] + [f"s{t}" for t in range(1, len(target) + 1)]
    step_inputs = [f"x{i}" for i in range(1, len(source) + 1)]
    step_inputs += [f"{name}{t}" for t in range(1, len(target) + 1) for name in ("in", "c")]
    lines.append(f"{{ rank=same; {'; '.join(states)}; }}")
    lines.append(f"{{ rank=same; {'; '.join(step_inputs)}; }}")
    lines.append(" -> ".join(states[:len(source) + 1]) + " [penwidth=2];")  # h1 -> .. -> hn -> c
    lines.append(" -> ".join(["c"] + states[len(source) + 1:]) + ";")  # c -> s1 -> .. -> sm
    lines.append("}")
    return "\n".join(lines)


def decoder_inputs(target=TARGET_TOKENS):
    """Decoder inputs per step: (teacher forcing, generation) token lists."""
    training = ["<bos>", *target[:-1]]  # the reference, shifted right by one
    generation = ["<bos>", *[f"ŷ{t}" for t in range(1, len(target))]]  # the model's own outputs
    return training, generation


LOG_FLOOR = 1e-30  # a log axis cannot show 0; smaller norms are drawn at this floor


def gradient_curves(rho, w_norm, measured, names):
    """Long table (distance, value, series) of the two bounds and the measured norms.

    names maps "bound", "w_bound" and "measured" to the legend's labels.
    """
    distance = measured["distance"].to_numpy()  # (D + 1,)
    series = {
        "bound": float(rho) ** distance,
        "w_bound": float(w_norm) ** distance,
        "measured": measured["norm"].to_numpy(),
    }
    frames = [
        pd.DataFrame({"distance": distance, "value": np.maximum(values, LOG_FLOOR), "series": names[key]})
        for key, values in series.items()
    ]
    return pd.concat(frames, ignore_index=True)


def decoder_input_table(training_name, generation_name, step_word, target=TARGET_TOKENS):
    """The decoder's inputs per step in training and in generation, as a two-row table."""
    training, generation = decoder_inputs(target)
    columns = [f"{step_word} {t}" for t in range(1, len(training) + 1)]
    return pd.DataFrame([training, generation], index=[training_name, generation_name], columns=columns)


def alignment_frame(source, targets, links, mark="●"):
    """Target-by-source table with `mark` where a target word links to a source position."""
    rows = [[mark if j in links.get(t, ()) else "" for j in range(len(source))] for t in targets]
    columns = [f"{j + 1}. {w}" for j, w in enumerate(source)]  # the two "the"s stay distinct
    return pd.DataFrame(rows, index=list(targets), columns=columns)
