"""The synthetic bottleneck experiment: data, models, accuracy, a short seeded run, the shipped results."""

import copy
import dataclasses
import json

import pytest
import torch

from course.lessons.bottleneck import task as bt

SMALL = bt.BottleneckConfig(vocab_size=6, embed_size=8, num_hiddens=12, min_len=3, max_len=7, batch_size=4,
                            steps=3, eval_per_length=2, bucket_edges=(3, 5, 8))


def test_targets_and_teacher_forcing_on_hand_made_sequences():
    src = torch.tensor([[1, 2, 3], [4, 0, 5]])
    assert bt.target_of(src, "copy").tolist() == [[1, 2, 3], [4, 0, 5]]
    assert bt.target_of(src, "reverse").tolist() == [[3, 2, 1], [5, 0, 4]]
    assert bt.decoder_input(src, bos=9).tolist() == [[9, 1, 2], [9, 4, 0]]
    with pytest.raises(ValueError, match="copy"):
        bt.target_of(src, "sort")


def test_accuracies_on_hand_made_predictions():
    tgt = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    pred = torch.tensor([[1, 2, 3, 4], [5, 0, 7, 0]])
    assert bt.token_accuracy(pred, tgt) == pytest.approx(6 / 8)
    assert bt.sequence_accuracy(pred, tgt) == pytest.approx(1 / 2)
    assert bt.token_accuracy(tgt, tgt) == bt.sequence_accuracy(tgt, tgt) == 1.0
    one_wrong_each = tgt.clone()
    one_wrong_each[:, 0] = 0
    assert bt.token_accuracy(one_wrong_each, tgt) == pytest.approx(3 / 4)
    assert bt.sequence_accuracy(one_wrong_each, tgt) == 0.0


def test_buckets_are_half_open_and_reject_lengths_outside():
    edges = (5, 10, 20, 61)
    assert [bt.bucket_of(n, edges) for n in (5, 9, 10, 19, 20, 60)] == ["5-9", "5-9", "10-19", "10-19", "20-60",
                                                                         "20-60"]
    for n in (4, 61):
        with pytest.raises(ValueError, match="outside"):
            bt.bucket_of(n, edges)


def test_final_state_hands_back_the_last_valid_encoder_output():
    values = torch.arange(2 * 4 * 3, dtype=torch.float32).reshape(2, 4, 3)  # (B, T, H)
    queries = torch.randn(2, 1, 5)
    out = bt.FinalState()(queries, None, values)
    torch.testing.assert_close(out, values[:, -1:])
    out = bt.FinalState()(queries, None, values, torch.tensor([2, 4]))
    torch.testing.assert_close(out[:, 0], torch.stack([values[0, 1], values[1, 3]]))


def test_shapes_of_both_models():
    src = torch.randint(0, SMALL.vocab_size, (4, 7))
    for attention in (False, True):
        model = bt.build_model(SMALL, attention)
        logits = model(src, bt.decoder_input(src, model.bos))
        assert logits.shape == (4, 7, SMALL.vocab_size + 1)
        pred = model.greedy(src, 7)
        assert pred.shape == (4, 7)
        assert int(pred.max()) < SMALL.vocab_size  # the start token is never predicted


def test_the_two_models_differ_only_by_the_attention_scorer():
    """At the same width the attention model has W_q, W_k (H x H) and w_v (H) more, nothing else."""
    h = SMALL.num_hiddens
    fixed = bt.count_parameters(bt.build_model(SMALL, False))
    attention = bt.count_parameters(bt.build_model(SMALL, True))
    assert attention - fixed == 2 * h * h + h
    assert type(bt.build_model(SMALL, True).decoder) is type(bt.build_model(SMALL, False).decoder)


def test_matched_width_gives_the_fixed_model_the_same_budget():
    config = bt.BottleneckConfig()
    target = bt.count_parameters(bt.build_model(config, True))
    h = bt.matched_hiddens(config)
    assert h > config.num_hiddens
    fixed = bt.count_parameters(bt.build_model(config, False, h))
    assert abs(fixed - target) / target < 0.01
    for other in (h - 1, h + 1):  # no other width is closer
        assert abs(bt.count_parameters(bt.build_model(config, False, other)) - target) >= abs(fixed - target)


@pytest.mark.slow
def test_a_run_is_determined_by_its_seed():
    first, again = bt.run(SMALL), bt.run(SMALL)
    other = bt.run(dataclasses.replace(SMALL, seed=1))
    for name in bt.MODELS:
        assert first["models"][name]["final_loss"] == again["models"][name]["final_loss"]
        assert first["models"][name]["by_length"] == again["models"][name]["by_length"]
    assert first["models"]["attention"]["final_loss"] != other["models"]["attention"]["final_loss"]
    bt.check_results(first)
    assert [row["bucket"] for row in first["models"]["fixed"]["by_length"]] == ["3-4", "5-7"]
    assert [row["n"] for row in first["models"]["fixed"]["by_length"]] == [4, 6]


def test_progress_runs_from_near_zero_to_one():
    seen = []
    bt.run(SMALL, progress=seen.append)
    assert len(seen) == 2 * SMALL.steps
    assert seen == sorted(seen) and seen[0] > 0 and seen[-1] == pytest.approx(1.0)


@pytest.mark.slow
def test_attention_beats_a_fixed_context_on_long_sequences_in_a_short_run():
    """About ten seconds: lengths 5-25, 250 steps; the long bucket separates the two models."""
    config = bt.BottleneckConfig(max_len=25, steps=250, batch_size=32, num_hiddens=32, embed_size=16,
                                 eval_per_length=4, bucket_edges=(5, 15, 26))
    results = bt.run(config)
    fixed, attention = (results["models"][m]["by_length"] for m in ("fixed", "attention"))
    assert attention[-1]["bucket"] == "15-25"
    assert attention[-1]["token_acc"] > fixed[-1]["token_acc"] + 0.15
    assert fixed[-1]["token_acc"] < fixed[0]["token_acc"]  # the fixed context loses accuracy with length


def test_the_shipped_results_are_what_the_command_writes_and_show_the_bottleneck():
    data = bt.load_results()
    defaults = json.loads(json.dumps(dataclasses.asdict(bt.BottleneckConfig())))
    assert data["config"] == defaults  # made by the default command
    assert set(data["versions"]) >= {"python", "torch"}
    models = data["models"]
    fixed_n, att_n = models["fixed"]["parameters"], models["attention"]["parameters"]
    assert abs(fixed_n - att_n) / att_n < 0.01
    fixed, attention = models["fixed"]["by_length"], models["attention"]["by_length"]
    assert [r["bucket"] for r in fixed] == ["5-9", "10-19", "20-29", "30-39", "40-49", "50-60"]
    assert sum(r["n"] for r in fixed) == (60 - 5 + 1) * data["config"]["eval_per_length"]
    # What the page says: the fixed context falls to near chance, attention keeps most tokens right.
    assert fixed[-1]["token_acc"] < 2 * data["chance"] < fixed[0]["token_acc"]
    assert all(f["token_acc"] > g["token_acc"] for f, g in zip(fixed, fixed[1:]))
    assert min(r["token_acc"] for r in attention) > 0.75
    assert all(a["token_acc"] > f["token_acc"] for a, f in zip(attention, fixed))


@pytest.mark.parametrize("breakage, where", [
    (lambda d: d.pop("chance"), "chance"),
    (lambda d: d["models"].pop("fixed"), "models"),
    (lambda d: d["models"]["fixed"]["by_length"][0].update(token_acc=1.5), "token_acc"),
    (lambda d: d["models"]["attention"]["by_length"].pop(), "buckets"),
    (lambda d: d["models"]["fixed"].update(parameters="many"), "parameters"),
])
def test_check_results_names_what_is_wrong(breakage, where):
    data = copy.deepcopy(bt.load_results())
    breakage(data)
    with pytest.raises(ValueError, match=where):
        bt.check_results(data)
