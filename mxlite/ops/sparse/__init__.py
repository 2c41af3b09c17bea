"""Sparse storage: the formats, the ``storage`` rules of the operator records, and the
operators that exist for sparse storage alone (``_sparse_retain``,
``_sparse_adagrad_update``). Importing the package
adds the rules to the registry's records (mxlite.ops imports it after every family)."""
from . import formats, rules  # noqa: F401
from . import adagrad, convert, dot, elemwise, embedding, reduce, where  # noqa: F401
from . import optim  # noqa: F401  (after adagrad: its lazy rules name the updates)
