"""What runs inside a tutorial page's process, on either side: ``page_driver.py`` (run by
path, with this folder first on ``sys.path``) and the offline stand-ins ``standins.py``.
Neither imports mxlite, so that MXNet's Python can run them; this file only makes the
folder a package, so that it ships with mxlite."""
