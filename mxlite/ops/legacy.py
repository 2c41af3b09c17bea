"""MXNet's legacy and internal operator names (_Plus, _equal, _zeros, ...) as aliases of the registered operators, and the remaining small operators."""
