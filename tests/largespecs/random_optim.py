"""Large-tensor rows: random samplers, shuffle, multinomial, optimizer updates."""

ROWS = {}
