"""Chapter 3 maths: masking, shift invariance, temperature, Jacobian, scorers, sqrt(d_k)."""

import math

import numpy as np
import pytest
import torch

from course.lessons import ch03


def test_masked_weights_per_example_zero_the_padding_and_renormalise():
    scores = ch03.random_scores(2, 3, 6, seed=5)
    weights = ch03.masked_weights(scores, [4, 2])
    for b, n in enumerate([4, 2]):
        assert torch.all(weights[b, :, n:] == 0)
        torch.testing.assert_close(weights[b, :, :n], torch.softmax(scores[b, :, :n], dim=-1))
    assert int((weights == 0).sum()) == ch03.expected_zero_count([4, 2], 3, 6) == 3 * 2 + 3 * 4


def test_masked_weights_per_query_and_empty_rows():
    scores = ch03.random_scores(2, 3, 6, seed=1)
    lens = [[6, 3, 0], [1, 5, 2]]
    weights = ch03.masked_weights(scores, lens)
    for b in range(2):
        for i in range(3):
            n = lens[b][i]
            assert torch.all(weights[b, i, n:] == 0)
            if n:
                torch.testing.assert_close(weights[b, i, :n], torch.softmax(scores[b, i, :n], dim=-1))
    assert torch.all(weights[0, 2] == 0)  # no valid key: an all-zero row, not NaN
    assert int((weights == 0).sum()) == ch03.expected_zero_count(lens, 3, 6) == sum(6 - n for r in lens for n in r)


def test_random_scores_are_seeded():
    torch.testing.assert_close(ch03.random_scores(2, 3, 4, seed=7), ch03.random_scores(2, 3, 4, seed=7))
    assert not torch.equal(ch03.random_scores(2, 3, 4, seed=7), ch03.random_scores(2, 3, 4, seed=8))


@pytest.mark.parametrize("shift", [-150, 0, 37, 150])
def test_shift_does_not_change_the_stable_softmax(shift):
    x = [3.0, 1.0, 0.2, -0.5, -2.0]
    table = ch03.shift_table(x, shift)
    expected = torch.softmax(torch.tensor(x, dtype=torch.float64), dim=0).numpy()
    np.testing.assert_allclose(table["stable"], expected, atol=1e-5)
    np.testing.assert_allclose(table["softmax(x - max x)"], expected, atol=1e-6)
    if abs(shift) >= 150:  # float32 exp overflows (or every term underflows to 0)
        assert table["naive"].isna().all()
    else:
        np.testing.assert_allclose(table["naive"], expected, atol=1e-5)


@pytest.mark.parametrize("temperature", [0.1, 0.5, 1.0, 4.0])
def test_temperature_divides_the_scores(temperature):
    x = torch.tensor([3.0, 1.0, 0.2, -0.5, -2.0])
    alpha = ch03.tempered(x.tolist(), temperature)
    torch.testing.assert_close(alpha, torch.softmax(x / temperature, dim=0))
    expected_h = -sum(p * math.log(p) for p in alpha.tolist() if p > 0)
    assert math.isclose(float(ch03.entropy(alpha)), expected_h, rel_tol=1e-5, abs_tol=1e-6)


def test_temperature_limits_and_bad_values():
    x = [3.0, 1.0, 0.2, -0.5, -2.0]
    assert float(ch03.tempered(x, 0.05).max()) > 0.999
    assert math.isclose(float(ch03.entropy(ch03.tempered(x, 1e4))), math.log(5), rel_tol=1e-3)
    with pytest.raises(ValueError, match="temperature"):
        ch03.tempered(x, 0)


def test_jacobian_matches_autograd():
    z = torch.tensor([0.5, -1.0, 2.0, 0.3], dtype=torch.float64)
    alpha = torch.softmax(z, dim=0)
    auto = torch.autograd.functional.jacobian(lambda v: torch.softmax(v, dim=0), z)
    torch.testing.assert_close(ch03.softmax_jacobian(alpha), auto)
    torch.testing.assert_close(ch03.softmax_jacobian(alpha).sum(dim=1), torch.zeros(4, dtype=torch.float64))


@pytest.mark.parametrize("d_q,d_k,h", [(8, 6, 16), (3, 3, 1), (64, 32, 10)])
def test_parameter_counts_follow_the_formulas(d_q, d_k, h):
    counts = ch03.parameter_counts(d_q, d_k, h)
    assert counts == {"additive": h * d_q + h * d_k + h, "dot": 0, "scaled": 0, "general": d_q * d_k}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_comparison_table_in_both_languages(lang):
    table = ch03.comparison_table(lang, 8, 6, 16)
    assert len(table) == 4
    params = table.iloc[:, 2].tolist()
    assert params == [16 * 14 + 16, 0, 0, 48]
    assert table.iloc[:, 0].nunique() == 4


def test_attention_variants_compute_what_they_claim():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, n, 4, generator=gen) for n in (3, 5, 5))
    fns = ch03.attention_fns(4, 6)
    scores = q @ k.transpose(1, 2)
    torch.testing.assert_close(fns["dot"](q, k, v), torch.softmax(scores, dim=-1) @ v)
    torch.testing.assert_close(fns["scaled"](q, k, v), torch.softmax(scores / 2.0, dim=-1) @ v)
    assert fns["additive"](q, k, v).shape == (2, 3, 4)


def test_timings_are_positive_for_every_scorer():
    ms = ch03.time_scorers(batch=1, n_q=2, n_k=3, d=4, num_hiddens=4, repeats=3)
    assert set(ms) == set(ch03.SCORERS) and all(v > 0 for v in ms.values())


@pytest.mark.parametrize("d", [1, 16, 256, 1024])
def test_scaling_keeps_the_score_variance_at_one(d):
    stats = ch03.scale_stats(d)
    # 4000 sampled dot products: the variance estimate is within ~5% (10% at d = 1, heavier tails).
    assert stats["unscaled"]["variance"] == pytest.approx(d, rel=0.15)
    assert stats["scaled"]["variance"] == pytest.approx(1.0, rel=0.15)


def test_scale_stats_match_an_independent_computation():
    d, n, m = 64, 500, 8
    gen = torch.Generator().manual_seed(0)  # the same draws, in the same order, as scale_stats
    q = torch.randn(n, 1, d, generator=gen).numpy().astype(np.float64)
    k = torch.randn(n, m, d, generator=gen).numpy().astype(np.float64)
    g = torch.randn(n, m, generator=gen).numpy().astype(np.float64)
    stats = ch03.scale_stats(d, n_queries=n, n_keys=m, seed=0)
    for name, s in (("unscaled", 1.0), ("scaled", 1 / math.sqrt(d))):
        z = np.einsum("nd,nmd->nm", q[:, 0], k) * s
        a = np.exp(z - z.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        grad = a * (g - (a * g).sum(axis=1, keepdims=True))  # J^T g for the softmax
        assert stats[name]["variance"] == pytest.approx(z.var(ddof=1), rel=1e-3)
        assert stats[name]["max_weight"] == pytest.approx(a.max(axis=1).mean(), rel=1e-4)
        assert stats[name]["entropy"] == pytest.approx(-(a * np.log(a)).sum(axis=1).mean(), rel=1e-4)
        assert stats[name]["grad_norm"] == pytest.approx(np.linalg.norm(grad, axis=1).mean(), rel=1e-4)


def test_without_scaling_the_softmax_saturates_as_d_grows():
    small, large = ch03.scale_stats(4), ch03.scale_stats(1024)
    assert large["unscaled"]["max_weight"] > 0.9 > small["unscaled"]["max_weight"]
    assert large["unscaled"]["grad_norm"] < large["scaled"]["grad_norm"] / 4
    assert large["scaled"]["entropy"] == pytest.approx(small["scaled"]["entropy"], rel=0.1)
    curve = ch03.scale_curve([1, 2], n_queries=20)
    assert len(curve) == 2 * 2 * 4


@pytest.mark.parametrize("shift", [-200, 200])
def test_the_shift_table_writes_nan_as_the_text_does(shift):
    shown = ch03.shift_display(ch03.shift_table(ch03.READING, shift))
    assert (shown["naive"] == "NaN").all() and not shown["stable"].str.contains("NaN").any()
    assert ch03.shift_display(ch03.shift_table(ch03.READING, 0))["naive"].ne("NaN").all()


def test_the_additive_score_is_the_slowest_as_the_text_says():
    """The page's sizes, the variants taking turns: the claim "usually the slowest" holds on this machine."""
    ms = ch03.time_scorers()
    assert max(ms, key=ms.get) == "additive", ms
