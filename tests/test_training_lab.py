"""The training lab's model and training: tasks, ablation switches, snapshots, callbacks, a default-size run."""

import math
from dataclasses import replace

import pytest
import torch

from course.lessons import lab_blocks, training_lab as tl

TINY = tl.LabConfig(num_hiddens=16, num_heads=2, ffn_num_hiddens=32, num_layers=2, seq_len=5, batch_size=16,
                    steps=40, lr=3e-3, warmup=5, log_every=10, snapshot_every=20, eval_size=16)


def model_of(config, seed=0):
    torch.manual_seed(seed)
    return tl.LabTransformer(config).eval()


def test_targets_and_teacher_forcing_on_hand_made_sequences():
    src = torch.tensor([[3, 1, 2], [0, 5, 4]])
    assert tl.target_of(src, "copy").tolist() == [[3, 1, 2], [0, 5, 4]]
    assert tl.target_of(src, "reverse").tolist() == [[2, 1, 3], [4, 5, 0]]
    assert tl.target_of(src, "sort").tolist() == [[1, 2, 3], [0, 4, 5]]
    assert tl.decoder_input(src, bos=9).tolist() == [[9, 3, 1], [9, 0, 5]]
    with pytest.raises(ValueError, match="copy"):
        tl.target_of(src, "shuffle")


def test_every_ablation_flips_exactly_its_switch():
    base = tl.LabConfig()
    for name, change in tl.ABLATIONS.items():
        config = tl.variant_config(name, base)
        differing = {f for f in vars(base) if getattr(config, f) != getattr(base, f)}
        assert differing == set(change), name
    assert tl.variant_config("baseline", base) == base
    with pytest.raises(ValueError, match="no_pe"):
        tl.variant_config("no_attention")


def test_without_positions_the_encoder_is_permutation_equivariant_and_with_them_it_is_not():
    src = torch.tensor([[0, 1, 2, 3, 4], [4, 4, 1, 0, 2]])
    perm = torch.tensor([3, 0, 4, 1, 2])
    for positional in (False, True):
        model = model_of(replace(TINY, positional=positional))
        with torch.no_grad():
            moved, plain = model.encode(src[:, perm]), model.encode(src)[:, perm]
        assert torch.allclose(moved, plain, atol=1e-5) == (not positional)


def test_the_unscaled_model_softmaxes_raw_dot_products():
    q, k, v = torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 5)
    model = model_of(replace(TINY, scaled=False))
    attention = model.encoder[0].attention.attention
    assert isinstance(attention, lab_blocks.UnscaledAttention)
    attention(q, k, v)
    torch.testing.assert_close(attention.attention_weights, torch.softmax(q @ k.transpose(1, 2), dim=-1))
    scaled = model_of(TINY).encoder[0].attention.attention
    scaled(q, k, v)
    torch.testing.assert_close(scaled.attention_weights, torch.softmax(q @ k.transpose(1, 2) / math.sqrt(8), dim=-1))


def test_layernorm_and_heads_switches_change_the_built_model():
    def norms(m):
        return sum(isinstance(x, torch.nn.LayerNorm) for x in m.modules())
    assert norms(model_of(replace(TINY, layernorm=False))) == 0
    assert norms(model_of(TINY)) == 2 * 2 + 2 * 3  # one per sub-layer
    assert norms(model_of(replace(TINY, pre_norm=True))) == 2 * 2 + 2 * 3 + 2  # and one after each stack
    src = torch.randint(0, TINY.vocab_size, (3, TINY.seq_len))
    for heads in (1, 2):
        model = model_of(replace(TINY, num_heads=heads))
        model(src, tl.decoder_input(src, model.bos))
        maps = model.attention_maps()
        assert maps["cross"].shape == (TINY.num_layers, 3, heads, TINY.seq_len, TINY.seq_len)


def test_training_lowers_the_loss_on_copy_and_calls_back():
    calls = []
    run = tl.train(replace(TINY, task="copy"), progress=lambda step, steps, r: calls.append((step, steps)))
    assert calls == [(s, TINY.steps) for s in range(1, TINY.steps + 1)]
    assert len(run["loss"]) == TINY.steps // TINY.log_every
    assert run["loss"][-1] < run["loss"][0] - 0.2, run["loss"]
    assert run["steps_done"] == TINY.steps and not run["stopped"]


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    a, b = tl.train(replace(TINY, steps=10), keep_maps=False), tl.train(replace(TINY, steps=10), keep_maps=False)
    c = tl.train(replace(TINY, steps=10, seed=1), keep_maps=False)
    assert a["loss"] == b["loss"] and a["loss"] != c["loss"]


def test_snapshots_hold_every_layer_and_head_at_every_kth_step():
    run = tl.train(replace(TINY, task="reverse"))
    assert [s["step"] for s in run["snapshots"]] == [0, 20, 40] == [x["step"] for x in run["tests"]]
    for snap in run["snapshots"]:
        assert len(snap["prediction"]) == TINY.seq_len
        for kind in tl.ATTENTION_KINDS:
            maps = torch.tensor(snap["maps"][kind])
            assert maps.shape == (TINY.num_layers, TINY.num_heads, TINY.seq_len, TINY.seq_len)
            torch.testing.assert_close(maps.sum(-1), torch.ones(maps.shape[:-1]), atol=5e-3, rtol=0)
        causal = torch.tensor(snap["maps"]["decoder"])
        assert float(causal.triu(diagonal=1).abs().max()) == 0  # no output position sees a later one


def test_the_stop_flag_ends_training_with_a_final_test():
    asked = []

    def stop():
        asked.append(1)
        return len(asked) > 7

    run = tl.train(TINY, should_stop=stop)
    assert run["stopped"] and run["steps_done"] == 7
    assert run["tests"][-1]["step"] == 7 and run["snapshots"][-1]["step"] == 7


def test_the_probe_has_distinct_digits_and_is_fixed():
    a, b = tl.probe_source(TINY), tl.probe_source(replace(TINY, seed=5))
    assert a.tolist() == b.tolist() and len(set(a[0].tolist())) == TINY.seq_len


def test_shipped_check_names_what_is_missing():
    with pytest.raises(ValueError, match="runs"):
        tl.check_results({"config": {}, "seeds": [0]})
    with pytest.raises(ValueError, match=r"runs\[0\]\.variant"):
        tl.check_results({"config": {}, "seeds": [0], "runs": [
            {"task": "copy", "variant": "nope", "seed": 0, "loss": [1], "tests": [], "snapshots": [],
             "final_seq_acc": 0, "seconds": 1}]})


def test_the_command_writes_and_resumes_a_results_file(tmp_path):
    out = tmp_path / "lab.json"
    small = replace(TINY, steps=4, snapshot_every=2, log_every=2)
    first = tl.run_all(small, tasks=("copy",), variants=("baseline", "no_pe"), seeds=(0,), out=out)
    assert [r["variant"] for r in tl.load_results(out)["runs"]] == ["baseline", "no_pe"]
    again = tl.run_all(small, tasks=("copy",), variants=("baseline", "no_pe", "one_head"), seeds=(0,), out=out)
    assert again["runs"][:2] == first["runs"] and again["runs"][2]["variant"] == "one_head"
    other = tmp_path / "other.json"
    tl.run_all(small, tasks=("sort",), variants=("baseline",), seeds=(0,), out=other)
    merged = tl.merge([other, out])
    assert [(r["task"], r["variant"]) for r in merged["runs"]] == [
        ("copy", "baseline"), ("copy", "no_pe"), ("copy", "one_head"), ("sort", "baseline")]
    tl.run_all(replace(small, steps=2), tasks=("copy",), variants=("baseline",), seeds=(0,), out=tmp_path / "x.json")
    with pytest.raises(ValueError, match="different configs"):
        tl.merge([out, tmp_path / "x.json"])


@pytest.mark.slow
def test_a_default_size_run_finishes_and_learns_reverse():
    run = tl.train(tl.LabConfig())
    assert run["steps_done"] == tl.LabConfig.steps and run["final_seq_acc"] >= 0.9
    print(f"default reverse run: {run['seconds']} s")  # goal <= 90 s on free cores; not asserted on a shared one


# ---- the shipped results: each ablation moves the way the page's text says, on both seeds -------------------

SHIPPED = tl.load_results() if tl.RESULTS.is_file() else None
# (ablation, task) -> what the text claims about its final greedy sequence accuracy against the baseline's:
# "fails" (below 10% while the baseline is above 90%) or "close" (within 10 points of the baseline).
CLAIMS = {
    ("no_pe", "copy"): "fails", ("no_pe", "reverse"): "fails", ("no_pe", "sort"): "close",
    ("no_residual", "copy"): "fails", ("no_residual", "reverse"): "fails", ("no_residual", "sort"): "fails",
    ("no_scale", "copy"): "close", ("no_scale", "reverse"): "close", ("no_scale", "sort"): "close",
    ("one_head", "copy"): "close", ("one_head", "reverse"): "close", ("one_head", "sort"): "close",
    ("no_layernorm", "copy"): "close", ("no_layernorm", "reverse"): "close", ("no_layernorm", "sort"): "close",
    ("pre_norm", "copy"): "close", ("pre_norm", "reverse"): "close", ("pre_norm", "sort"): "close",
    ("no_warmup", "copy"): "close", ("no_warmup", "reverse"): "close", ("no_warmup", "sort"): "close",
    ("label_smoothing", "copy"): "close", ("label_smoothing", "reverse"): "close", ("label_smoothing", "sort"): "close",
}


def shipped_pairs():
    """(ablation, task, seed, baseline final accuracy, ablation final accuracy) of every shipped pair."""
    for (ablation, task), _ in CLAIMS.items():
        for seed in tl.SEEDS:
            base, run = (tl.find_run(SHIPPED, task, v, seed) for v in ("baseline", ablation))
            if base and run:
                yield ablation, task, seed, base["final_seq_acc"], run["final_seq_acc"]


@pytest.mark.skipif(SHIPPED is None, reason="no shipped results file")
def test_every_shipped_ablation_differs_from_the_baseline_as_the_text_claims_on_both_seeds():
    seen = {}
    for ablation, task, seed, base, acc in shipped_pairs():
        claim = CLAIMS[(ablation, task)]
        if claim == "fails":
            assert base > 0.9 and acc < 0.1, (ablation, task, seed, base, acc)
        else:
            assert abs(acc - base) <= 0.1, (ablation, task, seed, base, acc)
        seen.setdefault((ablation, task), set()).add(seed)
    assert seen and all(seeds == set(tl.SEEDS) for seeds in seen.values()), seen  # both seeds of each
    assert SHIPPED["seeds"] == list(tl.SEEDS)


@pytest.mark.skipif(SHIPPED is None, reason="no shipped results file")
def test_on_the_sentence_pairs_only_no_residual_falls_behind_as_the_text_says_on_both_seeds():
    """lab.pairs_claim: every ablation but no_residual within 5 points of the baseline's held-out character
    accuracy on both seeds; no_residual at most 60% of it."""
    for seed in tl.SEEDS:
        base = tl.find_run(SHIPPED, "tatoeba", "baseline", seed)["final_token_acc"]
        assert 0.2 < base < 0.5, base  # "about a third of the held-out characters"
        for ablation in tl.ABLATIONS:
            acc = tl.find_run(SHIPPED, "tatoeba", ablation, seed)["final_token_acc"]
            if ablation == "no_residual":
                assert acc <= 0.6 * base, (seed, acc, base)
            else:
                assert abs(acc - base) <= 0.05, (ablation, seed, acc, base)


@pytest.mark.skipif(SHIPPED is None, reason="no shipped results file")
def test_the_shipped_sentence_pair_runs_hold_numbers_only():
    """The slice is never shipped: no string in a tatoeba run but its task and variant names."""
    def strings(x):
        if isinstance(x, str):
            yield x
        elif isinstance(x, dict):
            for v in x.values():
                yield from strings(v)
        elif isinstance(x, list):
            for v in x:
                yield from strings(v)
    runs = [r for r in SHIPPED["runs"] if r["task"] == "tatoeba"]
    assert len(runs) == len(tl.VARIANTS) * len(tl.SEEDS)
    assert {s for r in runs for s in strings(r)} <= {"tatoeba", *tl.VARIANTS}


def test_warmup_0_starts_at_the_peak_and_the_baseline_ramps_over_its_warmup():
    base = tl.LabConfig()
    assert tl.learning_rate(tl.variant_config("no_warmup"), 0) == base.lr
    assert tl.learning_rate(base, 0) == pytest.approx(base.lr / base.warmup)
    assert tl.learning_rate(base, base.warmup - 1) == pytest.approx(base.lr)


def test_label_smoothing_changes_the_training_but_the_logged_loss_stays_the_plain_cross_entropy():
    config = replace(TINY, task="copy", steps=3, log_every=1, snapshot_every=3)
    plain, smoothed = (tl.train(replace(config, label_smoothing=e), keep_maps=False) for e in (0.0, 0.1))
    assert plain["loss"][0] == smoothed["loss"][0]  # step 1: the same weights, the same plain loss logged
    assert plain["loss"][1:] != smoothed["loss"][1:]  # the smoothed gradient moved the weights elsewhere
