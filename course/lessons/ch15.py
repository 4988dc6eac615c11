"""Chapter 15: induction heads (Olsson et al. 2022) in a two-layer attention-only model.

Streamlit-free. The model is chapter 14's: the training lab's Transformer with
`decoder_only=True`, here also `attention_only=True` (no FFN: only attention writes to
the residual stream), two layers of two heads, trained by the lab's loop on the
"repeat" task (course.lessons.lab_tasks): a random pattern of random length repeated
to fill the sequence. A new symbol cannot be predicted; a repeated one can, by a
two-step circuit: a head of layer 1 copies each position's previous symbol into it
(a previous-token head), and a head of layer 2 looks for the positions whose previous
symbol is the current one and copies what they hold (an induction head).

`head_scores` measures both patterns on the test set; `part_losses` gives the loss
on new and repeated symbols, with one head's output removed (`ablate`).
`python -m course.lessons.ch15` trains the recipe on both seeds and writes RESULTS
and the weights.
"""

import argparse
import json
import math
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path

import pandas as pd
import torch
from torch import nn

from course.common import charts
from course.lessons import training_lab
from course.lessons.lab_tasks import REPEAT_TASK, task_data
from course.lessons.shipped_check import requirement
from course.lessons.torch_threads import cpu_threads

DATA_DIR = Path(__file__).with_name("data")
RESULTS = DATA_DIR / "ch15_induction.json"
SEEDS = (0, 1)
RECIPE = training_lab.LabConfig(
    task=REPEAT_TASK, decoder_only=True, attention_only=True, pre_norm=True, vocab_size=32, seq_len=32,
    num_hiddens=32, num_heads=1, num_layers=2, batch_size=64, steps=600, lr=3e-3, warmup=50, log_every=20,
    snapshot_every=50, eval_size=256)
PARTS = ("first", "repeat")


def weights_path(seed):
    """The shipped state_dict of this seed's model."""
    return DATA_DIR / f"ch15_induction_seed{seed}.pt"


@contextmanager
def ablate(model, layer, head):
    """Within the block, head `head` of layer `layer` (0-based) adds nothing: its slice of the merged heads is
    zeroed before the output projection W_o."""
    attention = model.encoder[layer].attention
    width = attention.W_o.in_features // attention.num_heads

    def zero(module, inputs):
        merged = inputs[0].clone()  # (B, T, heads * d_head)
        merged[..., head * width:(head + 1) * width] = 0
        return (merged,)

    handle = attention.W_o.register_forward_pre_hook(zero)
    try:
        yield model
    finally:
        handle.remove()


@torch.no_grad()
def part_losses(model, data):
    """{"first", "repeat"}: the test set's mean cross-entropy (nats) on new symbols and on repeated ones."""
    src, tgt = data.test_set()  # (N, T), (N, T)
    loss = nn.functional.cross_entropy(model(src).transpose(1, 2), tgt, reduction="none")  # (N, T)
    return {name: float(loss[mask].mean()) for name, mask in data.test_parts().items()}


def earlier_copies(ids, period):
    """(T, T) bool for one sequence of period n: query t, key s < t + 1 where s = t + 1 - k n (k >= 1), the
    positions just after the earlier occurrences of the symbol at t, for repeated positions t >= n."""
    T = ids.shape[0]
    t = torch.arange(T).unsqueeze(1)  # (T, 1)
    s = torch.arange(T).unsqueeze(0)  # (1, T)
    return (s >= 1) & (s <= t) & ((t + 1 - s) % period == 0) & (t >= period)  # (T, T)


@torch.no_grad()
def head_scores(model, data):
    """{(layer, head): {"previous": mean weight on position t - 1 (t >= 1), "induction": mean total weight on the
    earlier_copies of repeated positions}} on the test set."""
    ids, periods = data.test_data()  # (N, T + 1), (N,)
    src = ids[:, :-1]  # (N, T)
    model(src)
    maps = model.attention_maps()["self"]  # (layers, N, heads, T, T)
    previous = torch.diagonal(maps, offset=-1, dim1=-2, dim2=-1).mean(dim=(1, 3))  # (layers, heads)
    copies = torch.stack([earlier_copies(src[i], int(periods[i])) for i in range(len(src))])  # (N, T, T)
    repeated = copies.any(dim=-1)  # (N, T): the positions that have an earlier copy
    on_copies = (maps * copies[None, :, None]).sum(-1)  # (layers, N, heads, T)
    induction = (on_copies * repeated[None, :, None]).sum(dim=(1, 3)) / repeated.sum()  # (layers, heads)
    return {(layer, head): {"previous": float(previous[layer, head]), "induction": float(induction[layer, head])}
            for layer in range(maps.shape[0]) for head in range(maps.shape[2])}


def train_seed(seed, base=RECIPE, progress=None):
    """(model, run) of one seed: the lab's run (attention snapshots of the probe included) with the final
    head scores and the loss with each head ablated."""
    config = replace(base, seed=seed)
    with cpu_threads(config.threads):
        model, run = training_lab.fit(config, progress=progress, keep_maps=True)
        data = task_data(config)
        run["part_loss"] = {k: round(v, 4) for k, v in part_losses(model, data).items()}
        run["heads"] = [dict(layer=layer, head=head, **{k: round(v, 4) for k, v in scores.items()})
                        for (layer, head), scores in head_scores(model, data).items()]
        for entry in run["heads"]:
            with ablate(model, entry["layer"], entry["head"]):
                entry["ablated"] = {k: round(v, 4) for k, v in part_losses(model, data).items()}
    return model, run


def make_results(base=RECIPE, seeds=SEEDS):
    """({results}, {seed: state_dict})."""
    runs, weights = [], {}
    for seed in seeds:
        model, run = train_seed(seed, base)
        runs.append(run)
        weights[seed] = model.state_dict()
    probe_ids, probe_period = task_data(base).probe_data()
    return {"config": asdict(base), "seeds": list(seeds), "runs": runs, "probe": probe_ids[0, :-1].tolist(),
            "probe_period": int(probe_period[0]), "versions": {"torch": torch.__version__}}, weights


def check_results(data):
    """Raise ValueError naming the first part of the results that the page could not read."""
    need = requirement("chapter 15", "course.lessons.ch15")
    need(isinstance(data, dict), "the file", "must hold a JSON object")
    for key in ("config", "seeds", "runs", "probe", "probe_period"):
        need(key in data, key, "is missing")
    for seed in data["seeds"]:
        run = find_run(data, seed)
        need(run is not None, f"the run of seed {seed}", "is missing")
        for key in ("tests", "snapshots", "heads", "part_loss"):
            need(key in run, f"the run of seed {seed}: {key}", "is missing")
    return data


def load_results(path=RESULTS):
    """The shipped results, checked."""
    return check_results(json.loads(Path(path).read_text(encoding="utf-8")))


def load_model(results, seed):
    """The shipped model of this seed, in eval mode."""
    config = replace(training_lab.LabConfig(**results["config"]), seed=seed)
    torch.manual_seed(seed)
    model = training_lab.LabTransformer(config)
    model.load_state_dict(torch.load(weights_path(seed), map_location="cpu", weights_only=True))
    return model.eval()


def find_run(results, seed):
    """The run of this seed, or None."""
    return next((r for r in results["runs"] if r["seed"] == seed), None)


def roles(run):
    """(previous-token head, induction head): the layer-1 head with the highest previous score and the layer-2
    head with the highest induction score, as entries of run["heads"]."""
    first = max((h for h in run["heads"] if h["layer"] == 0), key=lambda h: h["previous"])
    second = max((h for h in run["heads"] if h["layer"] == 1), key=lambda h: h["induction"])
    return first, second


DROP_TESTS = 3  # the text's fastest stretch spans this many intervals between tests


def steepest_drop(run, width=DROP_TESTS):
    """(step before, step after, loss before, loss after) of the largest fall of the repeat loss over `width`
    consecutive intervals between tests."""
    tests = run["tests"]
    pairs = zip(tests, tests[width:])
    a, b = max(pairs, key=lambda p: p[0]["part_loss"]["repeat"] - p[1]["part_loss"]["repeat"])
    return a["step"], b["step"], a["part_loss"]["repeat"], b["part_loss"]["repeat"]


def claims(results, seed):
    """The figures the page's text states for one seed, formatted."""
    run = find_run(results, seed)
    prev, ind = roles(run)
    first, last = run["tests"][0]["part_loss"], run["part_loss"]
    s0, s1, l0, l1 = steepest_drop(run)
    pct = lambda x: f"{100 * x:.0f}%"  # noqa: E731
    return {"steps": results["config"]["steps"], "first_start": f"{first['first']:.2f}",
            "first_end": f"{last['first']:.2f}", "repeat_start": f"{first['repeat']:.2f}",
            "repeat_end": f"{last['repeat']:.2f}", "drop_from": s0, "drop_to": s1, "drop_before": f"{l0:.2f}",
            "drop_after": f"{l1:.2f}", "drop_share": pct((l0 - l1) / (first["repeat"] - last["repeat"])),
            "drop_steps": s1 - s0, "prev_head": prev["head"] + 1, "prev_score": pct(prev["previous"]),
            "ind_head": ind["head"] + 1, "ind_score": pct(ind["induction"]),
            "prev_ablated": f"{prev['ablated']['repeat']:.2f}", "ind_ablated": f"{ind['ablated']['repeat']:.2f}",
            "prev_ablated_first": f"{prev['ablated']['first']:.2f}",
            "ind_ablated_first": f"{ind['ablated']['first']:.2f}",
            "chance": f"{math.log(results['config']['vocab_size']):.2f}"}


# ---- charts ------------------------------------------------------------------------------------------------


def part_loss_chart(run, labels, title, x_title, y_title):
    """Test loss on new and repeated symbols over training -> Vega-Lite dict (labels: part -> name)."""
    rows = [{"step": x["step"], "loss": x["part_loss"][part], "part": labels[part]}
            for part in PARTS for x in run["tests"]]
    return charts.line_chart(pd.DataFrame(rows), "step", "loss", "part", title, x_title=x_title, y_title=y_title,
                             color_title="", points=True).to_dict()


def map_chart(run, step, layer, head, tokens, title, x_title, y_title):
    """One head's attention on the probe at the snapshot nearest `step` -> (Vega-Lite dict, the step shown)."""
    snap = min(run["snapshots"], key=lambda s: abs(s["step"] - step))
    weights = snap["maps"]["self"][layer][head]  # (T, T)
    labels = [str(tok) for tok in tokens]
    chart = charts.heatmap(weights, labels, labels, title=title, x_title=x_title, y_title=y_title, domain=[0, 1],
                           cell_size=16)
    return chart.to_dict(), snap["step"]


def main(argv=None):
    """Train and write the shipped results and weights."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    results, weights = make_results()
    for seed, state in weights.items():
        torch.save(state, args.out.with_name(weights_path(seed).name))
    training_lab.write_json(args.out, results)
    for run in results["runs"]:
        print(run["seed"], run["seconds"], run["part_loss"], json.dumps(run["heads"]))
        print(claims(results, run["seed"]))


if __name__ == "__main__":
    main()
