"""Issue 11, class 6: an error names the argument that caused it, not a downstream symptom."""

import numpy as np
import pytest

from lib import DirichletMechanism, GaussianMechanism, LaplaceMechanism, calibrate, optimal_order
from lib.mechanisms.dirichlet import approximate_dp as adp
from lib.experiments import data
from lib.experiments.data import DATA_ENV, DataFile, DataFileError, fetch
from tests._http import serve


def test_gaussian_construction_blames_its_arguments_not_the_scale():
    with pytest.raises(ValueError, match=r"lam \* l2_sq / \(2 epsilon\).*epsilon = 4.94066e-324"):
        GaussianMechanism(5e-324, 1e300)  # sigma = inf, then "noisy_counts must be finite" at release


def test_laplace_construction_at_tiny_epsilon_is_valid():
    mech = LaplaceMechanism(5e-324, 2.0)
    assert np.isfinite(mech.scale) and mech.scale > 0


def test_noise_overflow_blames_the_noise_scale():
    mech = GaussianMechanism.from_sigma(1e308)
    with pytest.raises(ValueError, match=r"counts plus noise of sigma = 1e\+308 overflow"):
        for seed in range(20):  # of 500 draws of N(0, 1e308^2) one exceeds 1.8e308 with probability ~1 - 1e-15
            mech.release(np.zeros((100, 5)), rng=seed)


def test_dirichlet_overflow_blames_counts_and_r():
    with pytest.raises(ValueError, match=r"counts must be at most .*\(r = "):
        DirichletMechanism(50.0, 2.0).release([1e308, 1.0], rng=0)


def test_calibrate_overflow_names_the_element():
    with pytest.raises(ValueError, match=r"epsilon = 1e\+300 \(element 1"):
        calibrate([1.0, 1e300], 2.0)


def test_order_search_blames_the_dp_target_not_an_inner_rdp_level():
    with pytest.raises(ValueError, match=r"^epsilon_hat = 1e\+300 with delta = 1e-05 cannot be calibrated"):
        optimal_order(1e300, 1e-5, [10, 20, 30], grid_size=16)
    with pytest.raises(ValueError, match=r"^epsilon_hat = 1e\+300"):
        adp.model_order(1e300, 1e-5, [np.array([10.0, 20.0])], n_releases=1, grid_size=16)


def test_fetch_says_where_it_looked_and_why_each_place_failed(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-folder"
    monkeypatch.setenv(DATA_ENV, str(missing))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with serve({}) as (base, _):
        file = DataFile("test/small.txt", "0" * 64, base + "/nothing.txt")
        with pytest.raises(DataFileError) as err:
            fetch(file)
    message = str(err.value)
    # before the fix: only "downloading ... failed: HTTP 404"
    assert f"{DATA_ENV} folder {missing} does not exist" in message
    assert "the cache folder" in message and "does not exist" in message
    assert "404" in message and file.url in message


def test_fetch_without_download_names_each_folder(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv(DATA_ENV, str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    file = DataFile("test/small.txt", "0" * 64, None)
    with pytest.raises(DataFileError) as err:
        fetch(file, download_missing=False)
    assert f"no {folder / file.path}[.gz]" in str(err.value)
    assert data.cache_dir() == tmp_path / "xdg" / data.CACHE_NAME
