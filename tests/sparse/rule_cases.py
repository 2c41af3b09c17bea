"""The calls that drive every storage rule (tests/sparse/test_sparse_rules.py), as plain data:
this module imports neither mxlite nor MXNet, so tests/fixtures/make_sparse_fixture.py runs
the same calls on MXNet 1.9.1 to record the output storage types MXNet gives."""

CSR, RSP, DNS = "csr", "row_sparse", "default"

# MXNet 1.9.1's unary ops with sparse outputs, and its scalar ops that keep sparsity
UNARY = ("abs", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "ceil", "degrees", "expm1",
         "fix", "floor", "log1p", "negative", "radians", "relu", "rint", "round", "sign", "sin",
         "sinh", "sqrt", "square", "tan", "tanh", "trunc", "clip", "_contrib_round_ste",
         "_contrib_sign_ste")
SCALAR = {"_mul_scalar": 3.0, "_div_scalar": 4.0, "_plus_scalar": 0.0, "_minus_scalar": 0.0,
          "_greater_scalar": 0.1, "_greater_equal_scalar": 0.2, "_lesser_scalar": -0.1,
          "_lesser_equal_scalar": -0.2, "_equal_scalar": 0.5, "_not_equal_scalar": 0.0}
RETAINED_ROWS = [6, 0, 3]


def case(op, stypes, shapes, attrs=None, low=-1.0, high=1.0, mxnet_out=None):
    """One call; ``mxnet_out``: the output storage type where MXNet has no such call (an
    mxlite-internal gradient op), else MXNet's is read from the fixture."""
    return dict(op=op, stypes=tuple(stypes), shapes=[tuple(s) for s in shapes],
                attrs=attrs or {}, low=low, high=high, mxnet_out=mxnet_out)


def label(c):
    """A case's name (its key in the fixture)."""
    attrs = ",".join(f"{k}={v}" for k, v in sorted(c["attrs"].items()))
    return f"{c['op']}({'-'.join(c['stypes']) or 'none'};{attrs})"


CASES = [
    case("cast_storage", (DNS,), [(5, 6)], {"stype": CSR}),
    case("cast_storage", (DNS,), [(5, 2, 3)], {"stype": RSP}),
    case("cast_storage", (CSR,), [(5, 6)], {"stype": DNS}),
    case("cast_storage", (RSP,), [(5, 6)], {"stype": DNS}),
    case("cast_storage", (CSR,), [(5, 6)], {"stype": CSR}),
    case("zeros", (), [], {"shape": (4, 3), "stype": CSR}),
    case("zeros", (), [], {"shape": (4, 3), "stype": RSP}),
    case("zeros_like", (CSR,), [(4, 5)]),
    case("zeros_like", (RSP,), [(4, 5)]),
    case("_copy", (CSR,), [(4, 5)]),
    case("stop_gradient", (RSP,), [(4, 5)]),
    case("make_loss", (CSR,), [(4, 5)]),
    case("slice", (CSR,), [(7, 5)], {"begin": (2,), "end": (5,)}),
    case("slice", (CSR,), [(7, 5)], {"begin": (1, 1), "end": (6, 4)}),
    case("_sparse_retain", (RSP, DNS), [(8, 3), (3,)]),
    case("take", (CSR, DNS), [(7, 5), (4,)], {"mode": "wrap"}),
    case("take", (CSR, DNS), [(7, 5), (4,)], {"mode": "clip"}),
    case("dot", (CSR, DNS), [(6, 7), (7, 3)]),
    case("dot", (CSR, DNS), [(6, 7), (3, 7)], {"transpose_b": True}),
    case("dot", (CSR, DNS), [(6, 7), (6, 3)], {"transpose_a": True}),
    case("dot", (CSR, DNS), [(6, 7), (6, 3)], {"transpose_a": True, "forward_stype": DNS}),
    case("dot", (CSR, RSP), [(6, 7), (7, 3)]),
    case("dot", (CSR, RSP), [(6, 7), (6, 3)], {"transpose_a": True}),
    case("dot", (DNS, CSR), [(4, 6), (6, 5)]),
    case("dot", (DNS, CSR), [(4, 6), (5, 6)], {"transpose_b": True}),
    case("dot", (DNS, CSR), [(6, 4), (6, 5)], {"transpose_a": True}),
    case("_contrib_getnnz", (CSR,), [(5, 7)]),
    case("_contrib_getnnz", (CSR,), [(5, 7)], {"axis": 1}),
    case("_square_sum", (RSP,), [(6, 4)], {"axis": 1, "keepdims": True}),
    case("_square_sum", (RSP,), [(6, 4)], {"axis": 1}),
    case("_square_sum", (RSP,), [(6, 4)], {"axis": 0}),
    case("sum", (CSR,), [(5, 7)], {"axis": 0}),
    case("sum", (CSR,), [(5, 7)], {"axis": 1, "keepdims": True}),
    case("mean", (CSR,), [(5, 7)], {"axis": -1}),
    case("add_n", (RSP, RSP, RSP), [(6, 3)] * 3),
    case("broadcast_mul", (CSR, DNS), [(5, 4), (1, 4)]),
    case("broadcast_div", (CSR, DNS), [(5, 4), (5, 1)], low=0.5, high=2.0),
    case("clip", (CSR,), [(5, 4)], {"a_min": -0.5, "a_max": 0.5}),
    case("clip", (RSP,), [(5, 4)], {"a_min": -0.5, "a_max": 0.5}),
]
for _name in ("elemwise_add", "elemwise_sub", "elemwise_mul"):
    CASES += [case(_name, (CSR, CSR), [(5, 6)] * 2), case(_name, (RSP, RSP), [(5, 6)] * 2)]
    for _pair in ((CSR, DNS), (DNS, CSR), (RSP, DNS), (DNS, RSP)):
        CASES.append(case(_name, _pair, [(5, 6)] * 2))
for _name in UNARY:
    if _name != "clip":
        CASES += [case(_name, (s,), [(5, 6)], low=-0.9, high=0.9) for s in (CSR, RSP)]
# cast keeps the storage (MXNet's astype of a sparse array gave its own storage too)
CASES += [case("cast", (s,), [(5, 6)], {"dtype": "float64"}, mxnet_out=s) for s in (CSR, RSP)]
for _name, _scalar in SCALAR.items():
    CASES += [case(_name, (s,), [(5, 6)], {"scalar": _scalar}) for s in (CSR, RSP)]

# the weight gradient of Embedding(sparse_grad=True): grad (4, 3), indices (4,), data (10, 3)
# (data gives only the shape: a row_sparse weight is not densified)
CASES += [case("_take_grad", (DNS, DNS, s), [(4, 3), (4,), (10, 3)],
               {"sparse_grad": True, "mode": "raise"}, mxnet_out=RSP) for s in (DNS, RSP)]
# where with a csr condition (x, y dense)
CASES.append(case("where", (CSR, DNS, DNS), [(5, 6)] * 3))
# lookups in a row_sparse weight (a Gluon row_sparse parameter's pulled rows): indices (2, 4)
EMBEDDINGS = ("Embedding", "_contrib_SparseEmbedding")
CASES += [case(_name, (DNS, RSP), [(2, 4), (10, 3)], {"input_dim": 10, "output_dim": 3})
          for _name in EMBEDDINGS]
# optimizer updates with a row_sparse gradient: lazily (the rows stored) and not
UPDATES = {"sgd_update": ({"lr": 0.1, "wd": 0.05}, 0),
           "sgd_mom_update": ({"lr": 0.1, "momentum": 0.9, "wd": 0.05}, 1),
           "adam_update": ({"lr": 0.1, "wd": 0.05}, 2),
           "ftrl_update": ({"lr": 0.1, "wd": 0.05}, 2),
           "_sparse_adagrad_update": ({"lr": 0.1}, 1)}
ALWAYS_LAZY = ("ftrl_update", "_sparse_adagrad_update")     # no lazy_update parameter
for _name, (_attrs, _n) in UPDATES.items():
    for _lazy in ((True, False) if _name not in ALWAYS_LAZY else (True,)):
        _kw = dict(_attrs, lazy_update=_lazy) if _name not in ALWAYS_LAZY else dict(_attrs)
        CASES.append(case(_name, (DNS, RSP) + (DNS,) * _n, [(8, 3)] * (2 + _n), _kw,
                          low=0.1, high=1.0))
        # a row_sparse weight with row_sparse states (what MXNet's optimizers make for it)
        CASES.append(case(_name, (RSP, RSP) + (RSP,) * _n, [(8, 3)] * (2 + _n), _kw,
                          low=0.1, high=1.0))

# MXNet's scatter forms: the op on the stored positions of the sparse first operand only
SCATTER = ("_scatter_plus_scalar", "_scatter_minus_scalar", "_scatter_elemwise_div")
CASES += [case(_name, (s,), [(5, 6)], {"scalar": 9.0}) for _name in SCATTER[:2]
          for s in (CSR, RSP)]
CASES += [case("_scatter_elemwise_div", (RSP, s), [(5, 6)] * 2, low=0.5, high=1.0)
          for s in (DNS, RSP, CSR)]
# quadratic of a csr matrix keeps it where it maps 0 to 0 (c == 0)
CASES.append(case("_contrib_quadratic", (CSR,), [(5, 6)], {"a": 2.0, "b": -1.0, "c": 0.0}))
