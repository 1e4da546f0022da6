"""Everything that runs on the device machine: the harness plugin, the worker, the supervisor.

`supervisor` starts one worker per framework, device and mode, confirms failures alone in a fresh
worker and writes the result shards; `harness` is the pytest plugin the cases run under;
`failures` applies the failure rules (`rules/failures.yaml`, data). It imports only the light core
(numpy, pyarrow, pytest, pyyaml), the framework under test and `tables.contracts`/`tables.atomic`:
never pandas, pandera, dvc, datasets, matplotlib or the pipeline (the import contracts in
`.importlinter` check this), so a machine with only the light core can run the benchmark.
"""
