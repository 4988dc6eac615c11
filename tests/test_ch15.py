"""Chapter 15: the repeat task and its parts on hand-made cases, the head scores and the head ablation against
implementations written differently, and the shipped runs' figures recomputed from the shipped weights (and, slow,
by retraining the start of the recipe)."""

import math
from dataclasses import replace

import pytest
import torch

from course.lessons import ch15, lab_tasks, training_lab

TINY = replace(ch15.RECIPE, seq_len=12, num_hiddens=8, num_heads=2, vocab_size=6, batch_size=4, eval_size=5,
               steps=10, snapshot_every=5, log_every=5)


def test_repeated_sequences_are_periodic_with_periods_in_range():
    ids, periods = lab_tasks.repeated(ch15.RECIPE, 200, torch.Generator().manual_seed(0))
    T = ch15.RECIPE.seq_len
    assert ids.shape == (200, T + 1)
    assert int(periods.min()) == lab_tasks.MIN_PERIOD and int(periods.max()) == T // 2  # both ends are drawn
    for row, n in zip(ids.tolist(), periods.tolist()):
        assert all(row[t] == row[t - n] for t in range(n, T + 1))


def test_repeat_parts_on_a_hand_made_case():
    parts = lab_tasks.repeat_parts(torch.tensor([4]), 8)
    # positions 0..2 predict pattern symbols 1..3 (new); position 3 predicts symbol 0 of the second copy, whose
    # own symbol (pattern symbol 3) was never seen before: neither part; positions 4.. continue the copy
    assert parts["first"][0].tolist() == [True, True, True, False, False, False, False, False]
    assert parts["repeat"][0].tolist() == [False, False, False, False, True, True, True, True]


def test_earlier_copies_on_a_hand_made_case():
    mask = ch15.earlier_copies(torch.zeros(7), 3)
    want = {3: [1], 4: [2], 5: [3], 6: [1, 4]}  # t=5: x[5]=x[2], next is position 3; t=6: x[6]=x[3]=x[0]
    for t in range(7):
        assert torch.nonzero(mask[t]).flatten().tolist() == want.get(t, []), t


def loop_scores(model, data):
    """The head scores with Python loops over sequences, queries and keys."""
    ids, periods = data.test_data()
    src = ids[:, :-1]
    with torch.no_grad():
        model(src)
    maps = model.attention_maps()["self"]  # (layers, N, heads, T, T)
    L, N, H, T, _ = maps.shape
    out = {}
    for layer in range(L):
        for head in range(H):
            prev = [float(maps[layer, i, head, t, t - 1]) for i in range(N) for t in range(1, T)]
            ind = []
            for i in range(N):
                n = int(periods[i])
                for t in range(n, T):
                    sources = [s for s in range(1, t + 1) if src[i, s - 1] == src[i, t] and (t - s + 1) % n == 0]
                    ind.append(sum(float(maps[layer, i, head, t, s]) for s in sources))
            out[(layer, head)] = {"previous": sum(prev) / len(prev), "induction": sum(ind) / len(ind)}
    return out


def test_head_scores_match_a_loop_implementation():
    torch.manual_seed(0)
    model = training_lab.LabTransformer(TINY).eval()
    data = lab_tasks.task_data(TINY)
    got, want = ch15.head_scores(model, data), loop_scores(model, data)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key]["previous"] == pytest.approx(want[key]["previous"], abs=1e-6)
        assert got[key]["induction"] == pytest.approx(want[key]["induction"], abs=1e-6)


def test_ablating_a_head_equals_zeroing_its_columns_of_w_o():
    torch.manual_seed(1)
    model = training_lab.LabTransformer(TINY).eval()
    src = torch.randint(0, TINY.vocab_size, (3, TINY.seq_len))
    width = TINY.num_hiddens // TINY.num_heads
    with torch.no_grad():
        plain = model(src)
        with ch15.ablate(model, 1, 1):
            ablated = model(src)
        assert torch.equal(model(src), plain)  # the hook is gone after the block
        model.encoder[1].attention.W_o.weight[:, width:2 * width] = 0  # head 2's columns
        zeroed = model(src)
    assert torch.allclose(ablated, zeroed, atol=1e-6) and not torch.allclose(ablated, plain)


def test_the_repeat_task_trains_and_logs_part_losses():
    model, run = training_lab.fit(TINY, keep_maps=True)
    assert set(run["tests"][-1]["part_loss"]) == {"first", "repeat"}
    assert [s["step"] for s in run["snapshots"]] == [0, 5, 10]
    assert len(run["snapshots"][0]["maps"]["self"]) == TINY.num_layers


# ---- the shipped runs ------------------------------------------------------------------------------------------

SHIPPED = ch15.load_results() if ch15.RESULTS.is_file() else None
shipped = pytest.mark.skipif(SHIPPED is None, reason="no shipped results")


@shipped
def test_the_shipped_weights_give_the_shipped_losses_scores_and_ablations():
    for seed in SHIPPED["seeds"]:
        run = ch15.find_run(SHIPPED, seed)
        model = ch15.load_model(SHIPPED, seed)
        data = lab_tasks.task_data(replace(training_lab.LabConfig(**SHIPPED["config"]), seed=seed))
        src, tgt = data.test_set()
        parts = data.test_parts()
        with torch.no_grad():
            logp = torch.log_softmax(model(src), dim=-1)  # (N, T, V)
        nll = -logp.gather(2, tgt.unsqueeze(2)).squeeze(2)  # (N, T)
        for part in ch15.PARTS:
            assert float(nll[parts[part]].mean()) == pytest.approx(run["part_loss"][part], abs=2e-4)
        scores = loop_scores(model, data)
        for entry in run["heads"]:
            key = (entry["layer"], entry["head"])
            assert scores[key]["previous"] == pytest.approx(entry["previous"], abs=2e-4)
            assert scores[key]["induction"] == pytest.approx(entry["induction"], abs=2e-4)
            width = model.encoder[key[0]].attention.W_o.in_features // model.encoder[key[0]].attention.num_heads
            bare = ch15.load_model(SHIPPED, seed)
            with torch.no_grad():
                bare.encoder[key[0]].attention.W_o.weight[:, key[1] * width:(key[1] + 1) * width] = 0
                loss = torch.nn.functional.cross_entropy(bare(src).transpose(1, 2), tgt, reduction="none")
            assert float(loss[parts["repeat"]].mean()) == pytest.approx(entry["ablated"]["repeat"], abs=2e-4)


@shipped
def test_the_text_figures_hold_on_both_seeds():
    """What the text says, on each seed: new symbols never get below chance, repeats fall far below it; a layer-1
    previous-token head and a layer-2 induction head; masking either puts the repeat loss above chance."""
    chance = math.log(SHIPPED["config"]["vocab_size"])
    for seed in SHIPPED["seeds"]:
        run = ch15.find_run(SHIPPED, seed)
        assert all(x["part_loss"]["first"] > chance - 0.05 for x in run["tests"])
        assert run["part_loss"]["repeat"] < chance / 4
        prev, ind = ch15.roles(run)
        assert prev["previous"] > 0.35 and prev["previous"] > 3 * prev["induction"]
        assert ind["induction"] > 0.5 and ind["induction"] > 3 * ind["previous"]
        for head in (prev, ind):
            assert head["ablated"]["repeat"] > chance > run["part_loss"]["repeat"]
        s0, s1, before, after = ch15.steepest_drop(run)
        losses = [x["part_loss"]["repeat"] for x in run["tests"]]
        width = ch15.DROP_TESTS
        drops = [losses[i] - losses[i + width] for i in range(len(losses) - width)]
        assert before - after == pytest.approx(max(drops)) and s1 - s0 == width * SHIPPED["config"]["snapshot_every"]
        assert (before - after) > 0.5 * (losses[0] - losses[-1])  # half the fall or more in that stretch
        slope = (before - after) / (s1 - s0)
        assert (losses[0] - before) / max(s0, 1) < slope / 2  # a slower start
        assert (after - losses[-1]) / (SHIPPED["config"]["steps"] - s1) < slope / 2  # and a slower tail


@shipped
@pytest.mark.slow
def test_retraining_the_start_of_the_recipe_gives_the_shipped_tests():
    config = replace(training_lab.LabConfig(**SHIPPED["config"]), seed=0, steps=100)
    assert training_lab.LabConfig(**SHIPPED["config"]) == ch15.RECIPE
    run = training_lab.train(config, keep_maps=False)
    shipped_tests = {x["step"]: x["part_loss"] for x in ch15.find_run(SHIPPED, 0)["tests"]}
    for x in run["tests"]:
        for part in ch15.PARTS:
            assert x["part_loss"][part] == pytest.approx(shipped_tests[x["step"]][part], abs=2e-3)
