"""mx.image tests (a package, so file names may repeat those elsewhere)."""
