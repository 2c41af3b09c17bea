"""Parameters of Gluon blocks (being written)."""


class Parameter:
    """A Gluon parameter (being written)."""


class Constant(Parameter):
    """A constant parameter (being written)."""


class ParameterDict(dict):
    """Parameters by name (being written)."""
