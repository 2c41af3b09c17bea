"""Tests of mxlite/gluon/contrib (a package, so file names may repeat those elsewhere)."""
