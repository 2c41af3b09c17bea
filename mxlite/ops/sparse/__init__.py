"""Sparse storage: the formats, the ``storage`` rules of the operator records, and the
operators that exist for sparse storage alone (``_sparse_retain``). Importing the package
adds the rules to the registry's records (mxlite.ops imports it after every family)."""
from . import formats, rules  # noqa: F401
from . import convert, dot, elemwise, embedding, optim, reduce  # noqa: F401
