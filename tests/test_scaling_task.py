"""The sqrt(d_k) learning experiment: the lookup task, the model, gradient sizes, the shipped results."""

import copy
import dataclasses
import json
import math

import pytest
import torch

from course.lessons.ch03 import scaling_task as st

SMALL = st.ScalingConfig(num_keys=12, num_values=5, num_pairs=4, batch_size=16, steps=20, log_every=5,
                         grad_batches=2, d_values=(8,))


def test_a_batch_is_a_well_posed_lookup():
    keys, values, query, answer = st.make_batch(torch.Generator().manual_seed(3), SMALL)
    assert keys.shape == values.shape == (16, 4) and query.shape == answer.shape == (16,)
    for b in range(16):
        assert len(set(keys[b].tolist())) == 4  # distinct keys: one right answer
        (where,) = (keys[b] == query[b]).nonzero()[0].tolist()
        assert answer[b] == values[b, where]
    assert int(keys.max()) < SMALL.num_keys and int(values.max()) < SMALL.num_values


@pytest.mark.parametrize("scaled", [True, False])
def test_the_softmax_reads_q_dot_k_with_or_without_the_scale(scaled):
    d = 16
    torch.manual_seed(0)
    model = st.LookupModel(SMALL, d, scaled)
    keys, values, query, _ = st.make_batch(torch.Generator().manual_seed(1), SMALL)
    logits, q = model(keys, values, query)
    k = model.W_k(model.key_embedding(keys))  # (B, m, d)
    scores = torch.bmm(q, k.transpose(1, 2))  # (B, 1, m)
    if scaled:
        scores = scores / math.sqrt(d)
    torch.testing.assert_close(model.attention.attention_weights, torch.softmax(scores, dim=-1))
    assert logits.shape == (16, SMALL.num_values)


def test_queries_and_keys_start_with_unit_variance_so_q_dot_k_has_variance_d():
    for d in (16, 256):
        torch.manual_seed(0)
        model = st.LookupModel(SMALL, d, scaled=False)
        ids = torch.arange(SMALL.num_keys)
        with torch.no_grad():
            q, k = model.W_q(model.key_embedding(ids)), model.W_k(model.key_embedding(ids))  # (n, d)
        assert 0.7 < float(q.var()) < 1.3
        assert 0.6 * d < float((q @ k.T).var()) < 1.4 * d


def test_score_gradient_matches_autograd_through_softmax():
    scores = torch.randn(5, 1, 7, requires_grad=True)
    weights = torch.softmax(scores, dim=-1)
    upstream = torch.randn(5, 1, 7)
    (weights * upstream).sum().backward()
    torch.testing.assert_close(st.score_gradient(weights.detach(), upstream), scores.grad)


def test_training_is_determined_by_the_seed_and_records_every_log_every_steps():
    curve, acc = st.train(SMALL, 8, True)
    again, acc_again = st.train(SMALL, 8, True)
    other, _ = st.train(dataclasses.replace(SMALL, seed=1), 8, True)
    assert len(curve) == SMALL.steps // SMALL.log_every
    assert curve == again and acc == acc_again and curve != other
    results = st.run(SMALL)
    st.check_results(results)
    assert st.loss_after(results, 8, "scaled", 20) == curve[-1]
    with pytest.raises(ValueError, match="multiple"):
        st.loss_after(results, 8, "scaled", 7)


def test_without_the_scale_the_score_gradient_shrinks_but_the_query_gradient_grows():
    config = st.ScalingConfig(grad_batches=2)
    scaled, unscaled = st.measure_gradients(config, 256, True), st.measure_gradients(config, 256, False)
    assert unscaled["max_weight"] > 0.8 > 0.5 > scaled["max_weight"]  # saturated softmax
    assert unscaled["scores"] < scaled["scores"] / 2
    assert unscaled["query"] > 2 * scaled["query"]
    assert unscaled["W_q"] > 2 * scaled["W_q"]


@pytest.mark.slow
def test_at_d_256_the_unscaled_layer_learns_slower_in_a_short_run():
    config = st.ScalingConfig(steps=100)
    scaled, _ = st.train(config, 256, True)
    unscaled, _ = st.train(config, 256, False)
    assert scaled[-1] < 0.05 < 0.3 < unscaled[-1]


def test_the_shipped_results_are_what_the_command_writes_and_say_what_the_page_says():
    data = st.load_results()
    assert data["config"] == json.loads(json.dumps(dataclasses.asdict(st.ScalingConfig())))
    assert sorted({r["d"] for r in data["runs"]}) == list(st.D_VALUES)
    for r in data["runs"]:
        assert len(r["loss"]) == data["config"]["steps"] // data["config"]["log_every"]
    for d in st.D_VALUES:
        s, u = (st.run_of(data, d, v)["gradients_at_init"] for v in ("scaled", "unscaled"))
        assert u["scores"] < s["scores"] and u["query"] > s["query"] and u["W_q"] > s["W_q"]
    for d in (64, 128, 256):  # the gap opens from d = 64 on
        assert st.loss_after(data, d, "unscaled", 100) > 2 * st.loss_after(data, d, "scaled", 100)
    assert st.run_of(data, 256, "unscaled")["loss"][-1] > 0.1 > 0.01 > st.run_of(data, 256, "scaled")["loss"][-1]
    scaled_at_100 = [st.loss_after(data, d, "scaled", 100) for d in st.D_VALUES]
    assert scaled_at_100 == sorted(scaled_at_100, reverse=True)  # with the scale, wider learns faster


@pytest.mark.parametrize("breakage, where", [
    (lambda d: d.pop("runs"), "runs"),
    (lambda d: d["runs"].pop(), "both versions"),
    (lambda d: d["runs"][0].update(loss=[]), "loss"),
    (lambda d: d["runs"][1]["gradients_at_init"].pop("query"), "query"),
    (lambda d: d["runs"][2].update(version="half"), "version"),
])
def test_check_results_names_what_is_wrong(breakage, where):
    data = copy.deepcopy(st.load_results())
    breakage(data)
    with pytest.raises(ValueError, match=where):
        st.check_results(data)
