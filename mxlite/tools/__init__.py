"""Command-line tools shipped with mxlite (``python -m mxlite.tools.<name>``)."""
