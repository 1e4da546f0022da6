"""The table layer: one record per table (`declaration`), the Arrow contracts and the pandera models
derived from it, reading and writing.

Every other layer reads and writes tables through here, and this package imports no other layer
of portability_data. `contracts` (with the record modules it gathers) and `atomic` need only
pyarrow, so the runner may use them on a bare device machine; `schemas` (pandera) and `tableio`
(pandas) are for the pipeline side.
"""
