"""Chapter 14: a decoder-only model that samples.

Streamlit-free. The model is the training lab's (course.lessons.training_lab) with
`decoder_only=True`: one stack of self-attention blocks under the causal mask,
trained by the lab's loop to predict the next character of the English side of the
Tatoeba pairs (the stream comes from course.translation.char_corpus; this module
never reads the data). Sampling turns its logits into a distribution with a
temperature, keeps the k most probable characters (top-k) and then the smallest set
whose probability reaches p (top-p, nucleus sampling: Holtzman et al. 2020), and
draws from what is left with a seeded generator.

The ablation trains the same model with `causal=False`: each position also reads
the characters after it, so its target is in its input. `prefix_loss` measures a
model as it is used when generating, predicting each character from the ones
before it only.

`python -m course.lessons.ch14 --corpus FILE` trains the recipe on both seeds, with
and without the mask, and writes RESULTS and the causal models' weights.
"""

import argparse
import json
import math
from dataclasses import asdict, replace
from pathlib import Path

import altair as alt
import pandas as pd
import torch
from torch import nn

from course.common import charts
from course.lessons import training_lab
from course.lessons.lab_tasks import CHARS_TASK, task_data
from course.lessons.shipped_check import requirement
from course.lessons.torch_threads import cpu_threads

DATA_DIR = Path(__file__).with_name("data")
RESULTS = DATA_DIR / "ch14_char_lm.json"
SEEDS = (0, 1)
VARIANTS = ("causal", "no_mask")
RECIPE = training_lab.LabConfig(
    task=CHARS_TASK, decoder_only=True, seq_len=48, num_hiddens=48, num_heads=4, ffn_num_hiddens=96, num_layers=2,
    batch_size=32, steps=600, lr=3e-3, warmup=50, log_every=20, snapshot_every=100, eval_size=128)
SAMPLE_PROMPT = "Tom "  # the shipped samples start here
SAMPLE_LENGTH = 120  # characters drawn after the prompt
SAMPLE_SETTINGS = {"temperature": 0.8, "top_k": 0, "top_p": 1.0}  # the shipped samples' filters (0: no top-k)


def weights_path(seed):
    """The shipped state_dict of the causal model of this seed."""
    return DATA_DIR / f"ch14_char_lm_seed{seed}.pt"


def variant_config(variant, base=RECIPE):
    """The recipe, with the causal mask (variant "causal") or without it ("no_mask")."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    return replace(base, causal=variant == "causal")


# ---- sampling: each step is a pure function of a probability vector ----------------------------------------


def with_temperature(logits, temperature):
    """softmax(logits / temperature) over the last axis: below 1 sharpens the distribution, above 1 flattens it."""
    if not temperature > 0:
        raise ValueError(f"temperature must be above 0; got {temperature}")
    return torch.softmax(torch.as_tensor(logits, dtype=torch.float64) / temperature, dim=-1)  # (..., V)


def top_k_filter(probs, k):
    """probs (V,) with all but the k most probable set to 0, renormalised (k = 0 or k >= V: unchanged); ties go
    to the lower index."""
    probs = torch.as_tensor(probs, dtype=torch.float64)  # (V,)
    if k <= 0 or k >= probs.numel():
        return probs / probs.sum()
    order = torch.sort(probs, descending=True, stable=True).indices  # (V,)
    kept = torch.zeros_like(probs)  # (V,)
    kept[order[:k]] = probs[order[:k]]
    return kept / kept.sum()


def top_p_filter(probs, p):
    """probs (V,) with only the nucleus kept, renormalised: the fewest most probable entries whose total reaches p
    (an entry is kept while the total before it is below p; p = 1: unchanged)."""
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1]; got {p}")
    probs = torch.as_tensor(probs, dtype=torch.float64)  # (V,)
    probs = probs / probs.sum()
    sorted_probs, order = torch.sort(probs, descending=True, stable=True)  # (V,), (V,)
    before = torch.cumsum(sorted_probs, dim=0) - sorted_probs  # (V,): the total of the entries ahead of each
    keep = before < p - 1e-12  # (V,); the first entry is always kept
    kept = torch.zeros_like(probs)  # (V,)
    kept[order[keep]] = sorted_probs[keep]
    return kept / kept.sum()


WORKED_PROBS, WORKED_P = (0.5, 0.3, 0.2), 0.7  # the text's top-p example


def worked_example(probs=WORKED_PROBS, p=WORKED_P):
    """The text's top-p example, formatted: the probabilities, p, the first one and the first two's total, and
    the filtered distribution."""
    kept = top_p_filter(probs, p).tolist()
    return {"probs": ", ".join(f"{x:g}" for x in probs), "p": f"{p:g}", "first": f"{probs[0]:g}",
            "two": f"{probs[0] + probs[1]:g}", "kept": ", ".join(f"{x:.4g}" for x in kept)}


def next_distribution(logits, temperature=1.0, top_k=0, top_p=1.0):
    """The distribution the next token is drawn from: temperature, then top-k, then top-p -> (V,)."""
    return top_p_filter(top_k_filter(with_temperature(logits, temperature), top_k), top_p)


# ---- the model: encode, predict, sample -----------------------------------------------------------------------


def encode(text, tokens):
    """Ids of text's characters; ValueError naming the first character outside the vocabulary."""
    index = {ch: i for i, ch in enumerate(tokens)}
    for ch in text:
        if ch not in index:
            raise ValueError(f"the character {ch!r} is not in the model's vocabulary")
    return [index[ch] for ch in text]


def decode(ids, tokens):
    """The text of a list of ids."""
    return "".join(tokens[i] for i in ids)


def build_model(config, vocab_size, state_dict=None):
    """The lab's decoder-only model of config, with the given weights, in eval mode."""
    torch.manual_seed(config.seed)
    model = training_lab.LabTransformer(config, vocab_size=vocab_size)
    if state_dict is not None:
        model.load_state_dict(state_dict)
    return model.eval()


@torch.no_grad()
def next_logits(model, ids, context):
    """Logits (V,) of the token after ids (a list), read from the last `context` ids (the trained length)."""
    window = torch.tensor([ids[-context:]], dtype=torch.long)  # (1, t)
    return model(window)[0, -1]  # (V,)


@torch.no_grad()
def sample(model, prompt_ids, length, context, temperature=1.0, top_k=0, top_p=1.0, seed=0):
    """prompt_ids followed by `length` ids drawn one at a time from next_distribution (a generator seeded
    with seed: the same arguments give the same text) -> list of ids."""
    gen = torch.Generator().manual_seed(seed)
    ids = list(prompt_ids)
    for _ in range(length):
        probs = next_distribution(next_logits(model, ids, context), temperature, top_k, top_p)  # (V,)
        ids.append(int(torch.multinomial(probs, 1, generator=gen)))
    return ids


@torch.no_grad()
def prefix_loss(model, src, tgt):
    """Cross-entropy (nats) of each next token predicted from the tokens before it only, as in generation: the
    mean over the windows and positions, one forward pass per prefix length. src, tgt (N, T)."""
    T = src.shape[1]
    losses = [nn.functional.cross_entropy(model(src[:, : t + 1])[:, -1], tgt[:, t]) for t in range(T)]  # T of ()
    return float(torch.stack(losses).mean())


@torch.no_grad()
def teacher_forced_loss(model, src, tgt):
    """Cross-entropy (nats) of all positions in one pass over whole windows (src, tgt (N, T)): training's view."""
    logits = model(src)  # (N, T, V)
    return float(nn.functional.cross_entropy(logits.transpose(1, 2), tgt))


# ---- the shipped runs ----------------------------------------------------------------------------------------


def train_variant(variant, seed, corpus, base=RECIPE, progress=None):
    """(model, run) of one variant and seed, the run with its test losses and a sample added."""
    config = replace(variant_config(variant, base), seed=seed)
    with cpu_threads(config.threads):
        model, run = training_lab.fit(config, progress=progress, keep_maps=False, pairs=corpus)
        src, tgt = task_data(config, corpus).test_set()  # (N, T), (N, T)
        run.update(variant=variant, test_loss=round(teacher_forced_loss(model, src, tgt), 4),
                   prefix_loss=round(prefix_loss(model, src, tgt), 4))
        ids = sample(model, encode(SAMPLE_PROMPT, corpus["tokens"]), SAMPLE_LENGTH, config.seq_len,
                     seed=seed, **SAMPLE_SETTINGS)
        run["sample"] = decode(ids, corpus["tokens"])
    return model, run


def make_results(corpus, base=RECIPE, seeds=SEEDS):
    """({results}, {seed: causal state_dict}) of every variant and seed."""
    runs, weights = [], {}
    for seed in seeds:
        for variant in VARIANTS:
            model, run = train_variant(variant, seed, corpus, base)
            runs.append(run)
            if variant == "causal":
                weights[seed] = model.state_dict()
    results = {"config": asdict(base), "tokens": corpus["tokens"], "seeds": list(seeds), "runs": runs,
               "sample_prompt": SAMPLE_PROMPT, "sample_settings": SAMPLE_SETTINGS,
               "versions": {"torch": torch.__version__}}
    return results, weights


def check_results(data):
    """Raise ValueError naming the first part of the results that the page could not read."""
    need = requirement("chapter 14", "course.lessons.ch14 --corpus FILE")
    need(isinstance(data, dict), "the file", "must hold a JSON object")
    for key in ("config", "tokens", "seeds", "runs"):
        need(key in data, key, "is missing")
    for seed in data["seeds"]:
        for variant in VARIANTS:
            run = find_run(data, variant, seed)
            need(run is not None, f"the {variant} run of seed {seed}", "is missing")
            for key in ("loss", "test_loss", "prefix_loss", "sample", "final_loss", "seconds"):
                need(key in run, f"the {variant} run of seed {seed}: {key}", "is missing")
    return data


def load_results(path=RESULTS):
    """The shipped results, checked."""
    return check_results(json.loads(Path(path).read_text(encoding="utf-8")))


def load_model(results, seed):
    """The shipped causal model of this seed."""
    config = replace(training_lab.LabConfig(**results["config"]), seed=seed)
    state = torch.load(weights_path(seed), map_location="cpu", weights_only=True)
    return build_model(config, len(results["tokens"]), state)


def find_run(results, variant, seed):
    """The run of (variant, seed), or None."""
    return next((r for r in results["runs"] if (r["variant"], r["seed"]) == (variant, seed)), None)


def claims(results, seed):
    """The figures the page's text states for one seed, formatted: final training losses of both variants,
    their test losses read as training does and read from the past only (as in generation)."""
    causal, free = find_run(results, "causal", seed), find_run(results, "no_mask", seed)
    return {"steps": results["config"]["steps"], "causal_train": f"{causal['final_loss']:.2f}",
            "free_train": f"{free['final_loss']:.2f}", "causal_prefix": f"{causal['prefix_loss']:.2f}",
            "free_test": f"{free['test_loss']:.2f}", "free_prefix": f"{free['prefix_loss']:.2f}",
            "uniform": f"{math.log(len(results['tokens'])):.2f}", "prompt": results["sample_prompt"],
            "temperature": results["sample_settings"]["temperature"]}


# ---- charts --------------------------------------------------------------------------------------------------


def distribution_frame(logits, tokens, temperature, top_k, top_p, labels, show=12):
    """Long DataFrame of the `show` most probable next tokens before and after the filters (labels: the two
    series' names)."""
    before = with_temperature(logits, 1.0)  # (V,)
    after = next_distribution(logits, temperature, top_k, top_p)  # (V,)
    top = torch.sort(before, descending=True, stable=True).indices[:show].tolist()
    names = [repr(tokens[i])[1:-1] if tokens[i].isspace() else tokens[i] for i in top]
    names = ["␣" if n == " " else n for n in names]
    rows = [{"token": name, "series": label, "p": float(dist[i])}
            for label, dist in zip(labels, (before, after)) for name, i in zip(names, top)]
    return pd.DataFrame(rows)


def distribution_chart(frame, title, x_title, y_title):
    """Grouped bars of the before/after distributions -> Vega-Lite dict."""
    order = list(dict.fromkeys(frame["token"]))
    chart = alt.Chart(frame).mark_bar().encode(
        x=alt.X("token:N", sort=order, title=x_title, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("series:N", sort=list(dict.fromkeys(frame["series"]))),
        y=alt.Y("p:Q", title=y_title),
        color=alt.Color("series:N", title=None, scale=charts.fixed_domain(frame["series"]),
                        legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("token:N", title=x_title), alt.Tooltip("series:N", title=" "),
                 alt.Tooltip("p:Q", title=y_title, format=".3f")])
    return chart.properties(title=title, height=260).to_dict()


def loss_chart(results, seed, labels, title, x_title, y_title):
    """Training loss of both variants of one seed over the steps -> Vega-Lite dict (labels: variant -> name)."""
    every = results["config"]["log_every"]
    rows = [{"step": every * (i + 1), "loss": x, "variant": labels[v]}
            for v in VARIANTS for i, x in enumerate(find_run(results, v, seed)["loss"])]
    return charts.line_chart(pd.DataFrame(rows), "step", "loss", "variant", title, x_title=x_title,
                             y_title=y_title, color_title="").to_dict()


def main(argv=None):
    """Train and write the shipped results and weights."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True,
                        help="the character stream: python -m course.translation.char_corpus --out FILE (never shipped)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    corpus = json.loads(args.corpus.read_text(encoding="utf-8"))
    results, weights = make_results(corpus)
    for seed, state in weights.items():
        torch.save(state, args.out.with_name(weights_path(seed).name))
    training_lab.write_json(args.out, results)
    for run in results["runs"]:
        print(run["variant"], run["seed"], run["final_loss"], run["test_loss"], run["prefix_loss"], repr(run["sample"]))


if __name__ == "__main__":
    main()
