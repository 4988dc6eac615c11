"""Records tests/golden/training.json: what the training loops and models computed before they were rebuilt on
one loop and one Transformer composition (tests/test_training_golden.py compares the code of today with it).

`PYTHONHASHSEED=0 python tests/golden/record_training.py ROOT OUT` imports the project at ROOT and writes OUT.
training.json was written so from commit 03b7e6b (before the rebuild): its expected values come from that older
code, never from the code under test. The hash seed is fixed, and the translators' tiny runs use a word vocabulary
(--src-subword 0): with the BPE vocabulary the same command gives one of two sets of weights from run to run (the
tokenizer's training is not deterministic here), before and after the rebuild alike.
"""

import argparse
import json
import random
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

LAB_STEPS = 30  # each lab run: short, but past a warmup point, two log points and two snapshots
WORDS = {"i": "我", "you": "你", "he": "他", "like": "喜欢", "see": "看", "tea": "茶", "cats": "猫",
         "books": "书", "big": "大", "small": "小", "red": "红", "old": "老"}


def tensor_summary(state):
    """{name: [sum, sum of |x|, first value]} of every floating tensor of a state_dict, in its key order."""
    return {k: [float(v.double().sum()), float(v.double().abs().sum()), float(v.reshape(-1)[0])]
            for k, v in state.items() if v.is_floating_point()}


def lab_configs(LabConfig, ABLATIONS):
    """(name, config, pairs) of every lab run recorded."""
    base = LabConfig(steps=LAB_STEPS, log_every=10, snapshot_every=15, eval_size=64, batch_size=32)
    runs = []
    for task in ("reverse", "sort"):
        for seed in (0, 1):
            runs.append((f"{task}/baseline/{seed}", replace(base, task=task, seed=seed)))
            for name, change in ABLATIONS.items():
                runs.append((f"{task}/{name}/{seed}", replace(base, task=task, seed=seed, **change)))
    runs.append(("reverse/attention_only/0", replace(base, attention_only=True)))
    lm = replace(base, task="repeat", decoder_only=True, vocab_size=16, seq_len=16)
    runs.append(("repeat/decoder_only/0", lm))
    runs.append(("repeat/decoder_only_no_mask/1", replace(lm, causal=False, seed=1)))
    runs.append(("repeat/decoder_only_attention_only_pre_norm/0", replace(lm, attention_only=True, pre_norm=True,
                                                                          num_heads=1)))
    return runs


def pairs_slice():
    """A small sentence-pair slice in the lab's plain-id form (padding and <end> exercised)."""
    rng = random.Random(3)
    tokens = ["<pad>", "<end>"] + [f"t{i}" for i in range(14)]
    make = lambda: [rng.randrange(2, 16) for _ in range(rng.randint(2, 6))]  # noqa: E731
    return {"tokens": tokens, "train": [[make(), make()] for _ in range(40)],
            "test": [[make(), make()] for _ in range(12)]}


def chars_corpus():
    """A small character stream in the lab's plain-id form."""
    rng = random.Random(5)
    tokens = list("abcdefghij ")
    return {"tokens": tokens, "train": [rng.randrange(11) for _ in range(600)],
            "test": [rng.randrange(11) for _ in range(200)]}


def lab_record(training_lab):
    """{run name: run dict without its time, plus the trained weights' summary}."""
    import torch

    out = {}
    configs = lab_configs(training_lab.LabConfig, training_lab.ABLATIONS)
    base = configs[0][1]
    extra = [("tatoeba/baseline/0", replace(base, task="tatoeba", seq_len=8), pairs_slice()),
             ("chars/decoder_only/0", replace(base, task="chars", decoder_only=True, seq_len=12, eval_size=16),
              chars_corpus())]
    for name, config, pairs in [(n, c, None) for n, c in configs] + extra:
        keep = name.endswith("/0") and "baseline" in name
        model, run = training_lab.fit(config, keep_maps=keep, pairs=pairs)
        run.pop("seconds")
        out[name] = {"run": run, "weights": tensor_summary(model.state_dict())}
    # A run stopped from outside after 12 steps (the live page's stop file).
    asked = [0]

    def stop():
        asked[0] += 1
        return asked[0] > 12

    model, run = training_lab.fit(replace(base, task="reverse"), should_stop=stop, keep_maps=False)
    run.pop("seconds")
    out["reverse/stopped_after_12/0"] = {"run": run, "weights": tensor_summary(model.state_dict())}
    with torch.no_grad():
        torch.manual_seed(0)
        probe = training_lab.LabTransformer(base)
        out["init_keys"] = list(probe.state_dict())
    return out


def bottleneck_record(task):
    import torch

    config = task.BottleneckConfig(steps=25, max_len=12, bucket_edges=(5, 9, 13), eval_per_length=4)
    out = {}
    for attention in (True, False):
        torch.manual_seed(config.seed)
        model = task.build_model(config, attention)
        losses = task.train(model, config)
        out["attention" if attention else "fixed"] = {"losses": losses,
                                                      "weights": tensor_summary(model.state_dict())}
    results = task.run(config)
    for m in results["models"].values():
        m.pop("train_seconds")
    results.pop("versions")
    out["run"] = results
    return out


def scaling_record(scaling):
    config = scaling.ScalingConfig(steps=30, log_every=10, d_values=(16, 32))
    return {f"{d}/{scaled}": dict(zip(("curve", "accuracy"), scaling.train(config, d, scaled)))
            for d in (16, 32) for scaled in (True, False)}


def ch02_record(ch02):
    data = ch02.default_data()
    return {"10x0.5": list(ch02.train_w_steps(data, 10, 0.5)), "5x2.0/seed3": list(ch02.train_w_steps(data, 5, 2.0, 3))}


def tiny_tsv(path, n):
    rng = random.Random(0)
    words, lines, seen = list(WORDS), [], set()
    while len(lines) < n:
        sent = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        en = " ".join(sent).capitalize() + "."
        if en in seen:
            continue
        seen.add(en)
        lines.append(f"{en}\t{''.join(WORDS[w] for w in sent)}。\tCC-BY 2.0 (France) toy #{len(lines)}")
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def translation_args(data, out, model, *extra):
    """The training command's options for a tiny run; a budget so large that the cosine schedule stays at its
    start (the learning rate then depends on the step only, not on the clock)."""
    shape = ["--num-hiddens", "32", "--num-layers", "2", "--dropout", "0.1"]
    shape += ["--ffn-num-hiddens", "64", "--num-heads", "4"] if model == "transformer" else ["--embed-size", "16"]
    return ["--model", model, "--data", str(data), "--out", str(out), "--resume-dir", str(out / "resume"),
            "--device", "cpu", "--minutes", "1000000", "--test-size", "20", "--valid-size", "20",
            "--batch-size", "16", "--min-freq", "1", "--log-every", "1000", "--threads", "1", "--no-eval",
            "--lr", "3e-3", "--warmup", "5", "--src-subword", "0", *shape, *extra]


def translation_record(T):
    import torch

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = tiny_tsv(Path(tmp) / "toy.tsv", 120)
        for model, extra in (("transformer", ("--max-epochs", "2", "--ema", "0.9", "--ema-start", "0")),
                             ("seq2seq", ("--max-epochs", "1"))):
            folder = Path(tmp) / model
            T.main(translation_args(data, folder, model, *extra))
            resume = torch.load(folder / "resume" / f"{model}.resume.pt", weights_only=True)
            out[model] = {"step": resume["step"], "epoch": resume["epoch"], "batch_pos": resume["batch_pos"],
                          "tokens_seen": resume["tokens_seen"], "model": tensor_summary(resume["model"]),
                          "ema": None if resume["ema"] is None else tensor_summary(
                              {k: v for k, v in resume["ema"].items() if k != "n_averaged"})}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the checkout whose code is the reference")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    import torch

    from course.lessons import ch02, training_lab
    from course.lessons.bottleneck import task
    from course.lessons.ch03 import scaling_task
    from course.translation import train as T

    assert Path(training_lab.__file__).resolve().is_relative_to(args.root.resolve())
    torch.set_num_threads(1)
    record = {"torch": torch.__version__, "lab": lab_record(training_lab), "bottleneck": bottleneck_record(task),
              "scaling": scaling_record(scaling_task), "ch02": ch02_record(ch02),
              "translation": translation_record(T)}
    args.out.write_text(json.dumps(record, indent=0, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
