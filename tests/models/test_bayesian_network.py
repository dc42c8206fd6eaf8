"""Tests of lib.models.bayesian_network: structures, counts, accounting, releases, eq. (11)."""

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.privacy.guarantees import NotPrivate, RenyiDP
from lib import DirichletMechanism, calibrate
from lib.mechanisms.noise import SmoothedEstimate
from lib.models.bayesian_network import (count_tables, depths, log_likelihood, network_spec, network_guarantee,
                                  release_tables, topological_order)
from lib.mechanisms.dirichlet.divergence import renyi_divergence_dirichlet
from lib.experiments.networks import AUTHOR_NAMES, NETWORKS, draw_network, prepare_network
from lib.mechanisms.protocol import ReleaseSpec, get

from tests.conftest import network_rows
from lib.models import bayesian_network as bn
from tests._reference import refused_quickly as _quick

# A small DAG with a root, a two-parent node and a node whose parents are given
# in non-sorted order: 0 -> 2, 1 -> 2, 2 -> 3, 0 -> 3.
N_VALUES = np.array([2, 3, 4, 2])
PARENTS = ((), (), (1, 0), (2, 0))


def synthetic(n=400, seed=0):
    """Rows drawn from a random network on PARENTS (ancestral sampling)."""
    return network_rows(n, N_VALUES, PARENTS, seed)


def calibrated(mechanism, epsilon=1.0, lam=5.0, n_total=400):
    """The per-table objects of ``mechanism`` for the network PARENTS at (lam, epsilon)-RDP (non-private: none)."""
    cls = get(mechanism)
    return cls.calibrate(RenyiDP(lam, epsilon) if cls.private else NotPrivate(), network_spec(N_VALUES, PARENTS, n_total))


def brute_force_counts(codes, n_values, parents):
    """N^k_{jc} by looping over every configuration and value."""
    out = []
    for k, ps in enumerate(parents):
        configs = list(itertools.product(*[range(n_values[p]) for p in ps]))
        t = np.zeros((len(configs), n_values[k]))
        for c, conf in enumerate(configs):   # product order = first parent most significant
            match = np.ones(len(codes), bool)
            for p, v in zip(ps, conf):
                match &= codes[:, p] == v
            for j in range(n_values[k]):
                t[c, j] = np.sum(match & (codes[:, k] == j))
        out.append(t)
    return out


# ------------------------------------------------------------------ structures

#: The structures as the author's notebooks wrote them (ORIGINAL_CODE_NOTES.md, Section 3).
AUTHOR = {
    "Adult": "age:;sex:;education:age;occupation:age,sex,education;"
             "capital-gain:sex,education,occupation;capital-loss:sex,occupation,capital-gain;"
             "income:occupation,capital-gain,capital-loss",
    "Bank": "month:;day_of_week:;housing:month;pdays:housing,month;poutcome:housing,pdays;"
            "previous:poutcome;contact:previous,month;campaign:day_of_week,month;"
            "duration:housing,contact,campaign;y:poutcome,duration,month",
    "GermanCredit": "housing:;property:housing;age:housing;amount:property;"
                    "other_debtors:property;sex_marital_status:amount;purpose:amount;"
                    "installment_rate:amount;duration:amount,installment_rate;"
                    "people_liable:sex_marital_status;foreign_worker:duration;"
                    "number_credits:age;credit_history:number_credits;"
                    "other_installment_plans:credit_history",
}


@pytest.mark.parametrize("name", list(AUTHOR))
def test_networks_are_the_authors_up_to_the_recorded_renaming(name):
    rename = {theirs: ours for ours, theirs in AUTHOR_NAMES.get(name, {}).items()}
    author = {}
    for item in AUTHOR[name].split(";"):
        node, ps = item.split(":")
        author[rename.get(node, node)] = tuple(rename.get(p, p) for p in ps.split(",") if p)
    assert list(NETWORKS[name].items()) == list(author.items())  # same order too
    nodes = list(NETWORKS[name])
    for k, node in enumerate(nodes):   # listed in a topological order
        assert all(nodes.index(p) < k for p in NETWORKS[name][node])


def test_network_sizes_and_labels():
    assert {n: len(g) for n, g in NETWORKS.items()} == {"Adult": 7, "Bank": 10, "GermanCredit": 14}
    assert "income" in NETWORKS["Adult"] and "y" in NETWORKS["Bank"]
    assert "credit_risk" not in NETWORKS["GermanCredit"]


def test_topological_order_and_depths():
    assert topological_order(PARENTS) == [0, 1, 2, 3]
    assert topological_order([(2,), (), ()]) == [1, 2, 0]
    assert len(topological_order([(1,), (0,)])) == 0   # a cycle
    assert depths(PARENTS).tolist() == [0, 0, 1, 2]
    with pytest.raises(ValueError, match="acyclic"):
        depths([(1,), (0,)])
    for name in NETWORKS:
        nodes = list(NETWORKS[name])
        parents = [tuple(nodes.index(p) for p in ps) for ps in NETWORKS[name].values()]
        d = depths(parents)
        assert all(d[k] > d[p] for k in range(len(nodes)) for p in parents[k])


# ------------------------------------------------------------------ accounting

def test_the_network_splits_its_target_and_reports_the_whole():
    """K tables at RenyiDP(lam, eps).split(K) compose (Lemma 1) to the network's target."""
    for eps, K in itertools.product([1e-3, 0.5, 10.0], [1, 7, 14]):
        spec = network_spec([2] * K, [()] * K, 10)
        cal = get("dirichlet").calibrate(RenyiDP(5.0, eps), spec)
        assert all(m.guarantee == RenyiDP(5.0, eps).split(K) for m in cal.releases)
        g = network_guarantee(cal, K)
        assert g.lam == 5.0 and g.epsilon == pytest.approx(eps, rel=1e-15)
        assert network_guarantee(list(cal.releases), K) == g  # the composition of the objects
    mle = get("mle").calibrate(NotPrivate(), network_spec([2, 2], [(), (0,)], 10))
    assert network_guarantee(mle, 2) == NotPrivate()


@pytest.mark.parametrize("eps", [1e-3, 0.1, 10.0])
def test_one_table_release_is_within_its_budget_when_two_rows_move(eps):
    """Proposition bn-prop-accounting: a record that changes its parent
    configuration moves one cell in each of two rows; the rows' exact Renyi
    divergences add up to at most the per-table level."""
    lam, K = 5.0, 7
    cal = calibrate(RenyiDP(lam, eps).split(K).epsilon, lam)
    table = np.array([[5.0, 0.0, 3.0], [0.0, 0.0, 0.0], [2.0, 7.0, 1.0]])
    worst = 0.0
    for (a, i), (b, j) in itertools.permutations(itertools.product(range(3), range(3)), 2):
        if table[a, i] == 0:
            continue
        other = table.copy()
        other[a, i] -= 1
        other[b, j] += 1
        for x, y in ((table, other), (other, table)):
            div = renyi_divergence_dirichlet(cal.r * x + cal.alpha, cal.r * y + cal.alpha, lam)
            worst = max(worst, float(np.sum(div)))
    assert 0 < worst <= RenyiDP(lam, eps).split(K).epsilon * (1 + 1e-12)


# ------------------------------------------------------------------ counts

def test_count_tables_equals_brute_force():
    codes = synthetic()
    tables = count_tables(codes, N_VALUES, PARENTS)
    for got, want in zip(tables, brute_force_counts(codes, N_VALUES, PARENTS)):
        np.testing.assert_array_equal(got, want)
    assert [t.shape for t in tables] == [(1, 2), (1, 3), (6, 4), (8, 2)]
    assert all(t.sum() == len(codes) for t in tables)
    # the public shapes of the releases: one row per parent configuration, no class prior
    spec = network_spec(N_VALUES, PARENTS, len(codes))
    assert spec == ReleaseSpec.of(tables, len(codes)) and spec.priors == ()


def test_unobserved_configurations_get_a_row():
    codes = np.array([[0, 0, 0, 0], [0, 1, 3, 1]])
    tables = count_tables(codes, N_VALUES, PARENTS)
    assert tables[2].shape == (6, 4)          # every configuration of (x1, x0)
    assert (tables[2].sum(axis=1) == 0).sum() == 4
    # mixed radix, first parent (node 1) most significant: (x1, x0) = (1, 0) -> row 2
    assert tables[2][2, 3] == 1 and tables[2][0, 0] == 1


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 59), st.lists(st.integers(0, 7), min_size=4,
                                                              max_size=4))
def test_replace_one_moves_at_most_two_cells_by_one(seed, row, new):
    codes = synthetic(n=60, seed=seed)
    other = codes.copy()
    other[row] = np.array(new) % N_VALUES
    for t, u in zip(count_tables(codes, N_VALUES, PARENTS), count_tables(other, N_VALUES, PARENTS)):
        diff = (t - u).ravel()
        assert np.abs(diff).max() <= 1 and np.count_nonzero(diff) <= 2 and diff.sum() == 0
        assert np.sum(diff ** 2) <= 2 and np.abs(diff).sum() <= 2


def test_structure_validation():
    codes = synthetic(n=10)
    with pytest.raises(ValueError, match="acyclic"):
        count_tables(codes, N_VALUES, ((3,), (), (1, 0), (2, 0)))
    with pytest.raises(ValueError, match=r"parents\[2\]"):
        count_tables(codes, N_VALUES, ((), (), (1, 4), (2, 0)))
    with pytest.raises(ValueError, match=r"parents\[2\]"):
        count_tables(codes, N_VALUES, ((), (), (2,), (2, 0)))
    with pytest.raises(ValueError, match="one entry per node"):
        count_tables(codes, N_VALUES, ((), ()))
    with pytest.raises(ValueError, match="n_values"):
        count_tables(codes, [2, 3, 1, 2], PARENTS)
    with pytest.raises(ValueError, match="codes"):
        count_tables(codes.astype(float), N_VALUES, PARENTS)
    with pytest.raises(ValueError, match="codes"):
        count_tables(codes + 3, N_VALUES, PARENTS)
    with pytest.raises(ValueError, match="cells"):
        count_tables(np.zeros((1, 4), int), [10**3] * 4, ((), (0,), (0, 1), (0, 1, 2)))


# ------------------------------------------------------------------ releases

def test_mle_is_eq12_with_pseudo_counts():
    codes = synthetic()
    tables = count_tables(codes, N_VALUES, PARENTS)
    logs = release_tables(tables, calibrated("mle"), n_draws=3)
    for t, lt in zip(tables, logs):
        assert lt.shape == (3,) + t.shape
        want = (t + 0.1) / (t.sum(axis=1, keepdims=True) + 0.1 * t.shape[1])
        np.testing.assert_allclose(np.exp(lt[1]), want, rtol=1e-13)


@pytest.mark.parametrize("mechanism", ["dirichlet", "gaussian", "laplace"])
def test_private_release_uses_eps_over_K_per_table(mechanism):
    codes = synthetic()
    tables = count_tables(codes, N_VALUES, PARENTS)
    eps, lam = 0.3, 5.0
    cal = calibrated(mechanism, eps, lam)
    assert cal.parameters["epsilon_release"] == pytest.approx(eps / len(tables))
    logs = release_tables(tables, cal, n_draws=5, rng=7)
    mech = get(mechanism)(eps / len(tables), lam)  # replace-one sensitivities are the defaults
    rng = np.random.default_rng(7)
    for t, lt in zip(tables, logs):
        want = mech.release(np.broadcast_to(t, (5,) + t.shape), rng)
        np.testing.assert_allclose(np.exp(lt), want, rtol=1e-12)
        np.testing.assert_allclose(np.exp(lt).sum(axis=-1), 1.0, rtol=1e-12)
        assert np.isfinite(lt).all()


def test_unobserved_rows_are_released_from_the_prior():
    """All-zero rows: Dirichlet(alpha) draws (mean uniform), not copies or NaN."""
    tables = [np.zeros((1, 2)), np.array([[4.0, 0.0, 1.0], [0.0, 0.0, 0.0]])]
    spec = ReleaseSpec.of(tables, 5)
    logs = release_tables(tables, get("dirichlet").calibrate(RenyiDP(5.0, 1.0), spec), n_draws=4000, rng=3)
    zero_row = np.exp(logs[1][:, 1])
    alpha = calibrate(0.5, 5.0).alpha
    # Dirichlet(alpha, alpha, alpha): mean 1/3, variance (1/3)(2/3)/(3 alpha + 1)
    sd = np.sqrt((2 / 9) / (3 * alpha + 1) / 4000)
    assert np.all(np.abs(zero_row.mean(axis=0) - 1 / 3) < 5 * sd)
    assert zero_row.std(axis=0).min() > 0
    for mech in ("gaussian", "laplace"):
        cal = get(mech).calibrate(RenyiDP(5.0, 1.0), spec)
        p = np.exp(release_tables(tables, cal, n_draws=50, rng=3)[1][:, 1])
        np.testing.assert_allclose(p.sum(axis=-1), 1.0)
        assert (p > 0).all()


class Scaled:
    """A minimal (non-random) mechanism object: rows of counts + a, normalised."""

    def __init__(self, a):
        self.a = a

    def release(self, counts, rng):
        s = counts + self.a
        return s / s.sum(axis=-1, keepdims=True)


def test_sequence_of_mechanism_objects():
    codes = synthetic()
    tables = count_tables(codes, N_VALUES, PARENTS)
    mechs = [DirichletMechanism(0.1 * (k + 1), 5.0) for k in range(len(tables))]
    logs = release_tables(tables, mechs, n_draws=3, rng=11)
    rng = np.random.default_rng(11)
    for m, t, lt in zip(mechs, tables, logs):
        np.testing.assert_allclose(np.exp(lt), m.release(np.broadcast_to(t, (3,) + t.shape), rng),
                                   rtol=1e-12)
    logs = release_tables(tables, [Scaled(0.1)] * len(tables), n_draws=2, rng=0)
    mle = release_tables(tables, calibrated("mle"), n_draws=2)
    for a, b in zip(logs, mle):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_release_validation():
    tables = count_tables(synthetic(n=50), N_VALUES, PARENTS)
    with pytest.raises(ValueError, match="ModelCalibration or a sequence of 4 objects"):
        release_tables(tables, "mle")  # names are resolved at the edge, never here
    with pytest.raises(ValueError, match="mechanism must be one of"):
        calibrated("exponential")
    with pytest.raises(ValueError, match="epsilon"):
        calibrated("dirichlet", None)
    with pytest.raises(ValueError, match="epsilon"):
        calibrated("gaussian", -1.0)
    with pytest.raises(ValueError, match="n_draws"):
        release_tables(tables, calibrated("mle"), n_draws=0)
    with pytest.raises(ValueError, match="sequence of 4 objects .* one per release"):
        release_tables(tables, [Scaled(1.0)] * 3)
    with pytest.raises(ValueError, match="release"):
        release_tables(tables, [object()] * 4)
    with pytest.raises(ValueError, match="zero or not finite"), np.errstate(divide="ignore"):
        release_tables(tables, [SimpleNamespace(release=lambda c, rng: 0 * c)] * 4)
    with pytest.raises(ValueError, match="tables"):
        release_tables([np.array([[1.0, -1.0]])], calibrated("mle"))
    assert any((t == 0).any() for t in tables)  # a zero count has no log without smoothing
    with pytest.raises(ValueError, match="smoothing"):
        release_tables(tables, SmoothedEstimate.configured(smoothing=0.0).calibrate(NotPrivate(), network_spec(N_VALUES, PARENTS, 50)))


# ------------------------------------------------------------------ eq. (11)

def test_log_likelihood_equals_sum_over_rows():
    codes = synthetic()
    test = synthetic(n=97, seed=5)
    tables = count_tables(codes, N_VALUES, PARENTS)
    logs = release_tables(tables, calibrated("dirichlet", 2.0), n_draws=6, rng=1)
    got = log_likelihood(test, logs, N_VALUES, PARENTS)
    assert got.shape == (6,)
    want = np.zeros(6)
    for row in test:
        for k, ps in enumerate(PARENTS):
            conf = 0
            for p in ps:
                conf = conf * N_VALUES[p] + row[p]
            want += logs[k][:, conf, row[k]]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # 2-D tables are one parameter set
    one = log_likelihood(test, [lt[2] for lt in logs], N_VALUES, PARENTS)
    np.testing.assert_allclose(one, got[2:3], rtol=1e-12)


def test_mle_maximises_the_training_log_likelihood():
    codes = synthetic()
    tables = count_tables(codes, N_VALUES, PARENTS)
    mle = release_tables(tables, SmoothedEstimate.configured(smoothing=1e-12).calibrate(NotPrivate(), network_spec(N_VALUES, PARENTS, len(codes))))
    best = log_likelihood(codes, mle, N_VALUES, PARENTS)[0]
    others = release_tables(tables, calibrated("dirichlet", 10.0), n_draws=20, rng=2)
    assert (log_likelihood(codes, others, N_VALUES, PARENTS) < best).all()


def test_zero_probability_in_an_unhit_cell_is_not_nan():
    codes = np.array([[0, 1]])
    with np.errstate(divide="ignore"):
        logs = [np.log([[1.0, 0.0]]), np.log([[0.0, 1.0], [0.5, 0.5]])]
        assert log_likelihood(codes, logs, [2, 2], [(), (0,)])[0] == 0.0


def test_log_likelihood_validation():
    codes = synthetic(n=20)
    logs = release_tables(count_tables(codes, N_VALUES, PARENTS), calibrated("mle", n_total=20), n_draws=2)
    with pytest.raises(ValueError, match="one table per node"):
        log_likelihood(codes, logs[:3], N_VALUES, PARENTS)
    with pytest.raises(ValueError, match=r"log_tables\[1\]"):
        log_likelihood(codes, [logs[0], logs[1][:, :, :2], logs[2], logs[3]], N_VALUES, PARENTS)
    with pytest.raises(ValueError, match="batch size"):
        log_likelihood(codes, [logs[0][:1]] + logs[1:], N_VALUES, PARENTS)
    with pytest.raises(ValueError, match="log-probabilities"):
        log_likelihood(codes, [-logs[0] + 1] + logs[1:], N_VALUES, PARENTS)


def test_draw_network_layers():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nodes = list(NETWORKS["Bank"])
    parents = [tuple(nodes.index(p) for p in ps) for ps in NETWORKS["Bank"].values()]
    ax = draw_network(nodes, parents, title="Bank", labels={n: n for n in nodes})
    texts = {t.get_text(): t.get_position() for t in ax.texts if t.get_text()}
    assert set(texts) == set(nodes)
    for k, ps in enumerate(parents):   # every edge points down
        assert all(texts[nodes[p]][1] > texts[nodes[k]][1] for p in ps)
    assert ax.get_title() == "Bank"
    ax = draw_network(["other_installment_plans", "y"], [(), (0,)])
    assert {t.get_text() for t in ax.texts if t.get_text()} == {
        "other-\ninstallment-\nplans", "y"}
    with pytest.raises(ValueError, match="one entry per node"):
        draw_network(["a", "b"], [()])
    plt.close("all")


# ------------------------------------------------------------------ the datasets

@pytest.mark.needs_data
@pytest.mark.parametrize("name", list(NETWORKS))
def test_prepare_network(name):
    from lib.experiments.data import label_column
    from lib.experiments.preprocessing import prepare

    data = prepare_network(name)
    split = prepare(name)
    assert data.nodes == tuple(NETWORKS[name])
    columns = list(split.attributes) + [label_column(name)]
    sizes = np.append(split.n_values, split.n_classes)
    for k, node in enumerate(data.nodes):
        j = columns.index(node)
        assert data.n_values[k] == sizes[j]
        col_train = split.y_train if j == len(split.attributes) else split.X_train[:, j]
        np.testing.assert_array_equal(data.train[:, k], col_train)
    assert data.train.shape == (len(split.y_train), len(data.nodes))
    assert data.test.shape == (len(split.y_test), len(data.nodes))
    for t in count_tables(data.test, data.n_values, data.parents):
        assert t.sum() == len(split.y_test)     # no test row is lost


def test_prepare_network_rejects_unknown_names():
    with pytest.raises(ValueError, match="GermanCredit"):
        prepare_network("Digit")


CODE_N_VALUES = np.array([2, 3])


X = np.array([[0, 1], [1, 2], [1, 0], [0, 0], [1, 1]])


def test_bayesian_network_codes_are_checked_before_indexing():
    parents = [(), (0,)]
    tables = bn.count_tables(X, CODE_N_VALUES, parents)
    logs = bn.release_tables(tables, DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), bn.network_spec(CODE_N_VALUES, parents, 5)),
                             rng=0)
    for bad in ([[0, 3]], [[-1, 0]], [[2**40, 0]]):
        with pytest.raises(ValueError, match="codes must hold codes"):
            bn.log_likelihood(np.array(bad), logs, CODE_N_VALUES, parents)


def test_network_spec_does_not_wrap_around():
    # 2**32 * 2**32 wraps to 0 in int64; the spec must refuse, not return 0 rows.
    with pytest.raises(ValueError, match="cells"):
        bn.network_spec([2**32, 2**32, 2], [(), (), (0, 1)], 10)



def test_bayesian_network_caps_the_total_over_all_tables():
    n_values = [10**4] * 3
    parents = [(), (0,), (1,)]  # 1e4 + 1e8 + 1e8 cells: each table at the cap, together above it
    _quick(lambda: bn.count_tables(np.zeros((1, 3), int), n_values, parents), "tables would have")
