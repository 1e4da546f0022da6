"""The table layer: the Arrow contracts of every table, the pandera models, reading and writing.

Every other layer reads and writes tables through here, and this package imports no other layer
of portability_data. `contracts` and `atomic` need only pyarrow, so the runner may use them on a
bare device machine; `schemas` (pandera) and `tableio` (pandas) are for the pipeline side.
"""
