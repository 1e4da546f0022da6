"""Everything that runs on the device machine: the harness plugin, the worker, the supervisor.

`supervisor` runs one framework x device x mode: it starts workers (`worker_process`), journals
every finished row (`journal`), confirms failures alone in a fresh worker and writes the result
shard and runs row; `spec` says what a run is and where it writes; `provenance` describes the host
and digests the code that ran; `harness` is the pytest plugin the cases run under and `worker` the
process that imports the framework once; `failures` applies the failure rules
(`rules/failures.yaml`, data); `case_rows` reads the case rows; `progress` and `run_summary` tell
people how it went. It imports only the light core (numpy, pyarrow, pytest, pyyaml), the framework
under test and `tables.contracts`/`tables.atomic`: never pandas, pandera, dvc, datasets,
matplotlib or the pipeline (the contracts in `.importlinter` check this), so a machine with only
the light core can run the benchmark (tests/test_bare_runner.py).
"""
