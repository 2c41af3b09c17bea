"""Operator families. Importing this package registers every operator in the registry."""
from . import registry  # noqa: F401
from . import elemwise  # noqa: F401
from . import creation  # noqa: F401
from . import linalg  # noqa: F401
from . import control  # noqa: F401
from . import shape  # noqa: F401
from . import index  # noqa: F401
from . import indexing  # noqa: F401
from . import reduce  # noqa: F401
from . import debug  # noqa: F401
from . import random  # noqa: F401
