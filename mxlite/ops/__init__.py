"""Operator families. Importing this package registers every operator in the registry."""
from . import registry  # noqa: F401
from . import elemwise  # noqa: F401
from . import creation  # noqa: F401
from . import linalg  # noqa: F401
