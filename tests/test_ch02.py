"""Chapter 2 maths: data, Nadaraya-Watson predictions, leave-one-out training, bmm shapes."""

import math

import numpy as np
import pytest
import torch

from course.lessons import ch02


@pytest.fixture(scope="module")
def data():
    return ch02.make_data(n_train=50, noise=0.5, seed=0)


def nw_numpy(x_query, x_keys, y_values, w):
    """Independent Nadaraya-Watson: Gaussian kernel weights, normalised, times the values."""
    d = (np.asarray(x_query, dtype=np.float64)[:, None] - np.asarray(x_keys, dtype=np.float64)[None, :]) * w
    k = np.exp(-(d**2) / 2)
    weights = k / k.sum(axis=1, keepdims=True)
    return weights @ np.asarray(y_values, dtype=np.float64), weights


def test_data_is_seeded_sorted_and_follows_the_function(data):
    again = ch02.make_data(n_train=50, noise=0.5, seed=0)
    other = ch02.make_data(n_train=50, noise=0.5, seed=1)
    torch.testing.assert_close(data.x_train, again.x_train)
    assert not torch.equal(data.x_train, other.x_train)
    x = data.x_train.numpy()
    assert np.all(np.diff(x) >= 0) and x.min() >= 0 and x.max() < 5
    truth = 2 * np.sin(x) + x**0.8
    residual = data.y_train.numpy() - truth
    assert 0.3 < residual.std() < 0.7  # noise of standard deviation 0.5
    assert len(data.x_test) == 50 and math.isclose(float(data.x_test[1] - data.x_test[0]), 0.1, rel_tol=1e-5)
    np.testing.assert_allclose(data.y_truth.numpy(), 2 * np.sin(data.x_test.numpy()) + data.x_test.numpy() ** 0.8,
                               rtol=1e-5)


def test_average_pooling_is_the_mean_for_every_query(data):
    y = ch02.average_pooling(data).numpy()
    assert y.shape == (len(data.x_test),)
    np.testing.assert_allclose(y, np.full(len(y), data.y_train.numpy().mean()), rtol=1e-6)


@pytest.mark.parametrize("w", [0.3, 1.0, 4.0])
def test_nw_predict_matches_an_independent_formula(data, w):
    y_hat, weights = ch02.nw_predict(data, w)
    expected_y, expected_w = nw_numpy(data.x_test, data.x_train, data.y_train, w)
    np.testing.assert_allclose(weights.numpy(), expected_w, atol=1e-6)
    np.testing.assert_allclose(y_hat.numpy(), expected_y, atol=1e-5)
    np.testing.assert_allclose(weights.sum(dim=1).numpy(), 1.0, atol=1e-6)


def test_narrow_kernel_fits_better_than_average_pooling(data):
    y_avg = ch02.average_pooling(data)
    y_nw, _ = ch02.nw_predict(data, 3.0)
    assert ch02.mse(y_nw, data.y_truth) < ch02.mse(y_avg, data.y_truth) / 5


def test_leave_one_out_drops_exactly_the_query_point():
    x = torch.tensor([0.0, 1.0, 2.0, 3.0])
    y = torch.tensor([10.0, 11.0, 12.0, 13.0])
    keys, values = ch02.leave_one_out(x, y)
    assert keys.shape == values.shape == (4, 3)
    for i in range(4):
        np.testing.assert_array_equal(keys[i].numpy(), np.delete(x.numpy(), i))
        np.testing.assert_array_equal(values[i].numpy(), np.delete(y.numpy(), i))


def test_training_starts_from_the_seeded_w_and_lowers_the_loss(data):
    steps = list(ch02.train_w_steps(data, epochs=8, lr=0.5, seed=0))
    assert [s[0] for s in steps] == list(range(1, 9))
    torch.manual_seed(0)
    w0 = float(torch.rand(1))  # the module's initial w under the same seed
    keys, values = ch02.leave_one_out(data.x_train, data.y_train)
    y0 = np.array([nw_numpy([data.x_train[i]], keys[i], values[i], w0)[0][0] for i in range(len(keys))])
    loss0 = ((y0 - data.y_train.numpy()) ** 2).mean() / 2
    assert math.isclose(steps[0][2], loss0, rel_tol=1e-4)  # first loss is measured before the update
    assert steps[-1][2] < steps[0][2]
    assert steps[-1][1] != pytest.approx(w0)


def test_training_rejects_bad_settings(data):
    with pytest.raises(ValueError, match="epochs"):
        list(ch02.train_w_steps(data, epochs=0))
    with pytest.raises(ValueError, match="n_train"):
        ch02.make_data(n_train=1)


def test_bmm_shapes_follow_the_leave_one_out_sizes(data):
    n = len(data.x_train)
    shapes = dict(ch02.bmm_shapes(data, 1.0))
    assert shapes["keys"] == shapes["values"] == shapes["weights"] == (n, n - 1)
    assert shapes["weights.unsqueeze(1)"] == (n, 1, n - 1)
    assert shapes["values.unsqueeze(-1)"] == (n, n - 1, 1)
    assert shapes["torch.bmm(...)"] == (n, 1, 1)
    assert shapes["reshape(-1)"] == (n,)


def test_charts_contain_every_curve(data):
    curves = {"average": ch02.average_pooling(data), "nw": ch02.nw_predict(data, 1.0)[0]}
    frame = ch02.fit_frame(data, curves)
    assert set(frame["curve"]) == {"truth", "average", "nw"}
    assert len(frame) == 3 * len(data.x_test)
    spec = ch02.weights_chart(ch02.nw_predict(data, 1.0)[1], data.x_test, data.x_train, "q", "k").to_dict()
    assert spec["mark"]["type"] == "rect"
