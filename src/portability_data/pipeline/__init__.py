"""The steps of the data flow (docs/ARCHITECTURE.md, "Data flow"), named like their `dvc.yaml`
stage and `portability` command: a module, or a package whose build.py writes the stage's table.

Stages: enumerate.py, declared.py (what each framework declares per device), frequencies/ (usage),
sample.py, cases.py (the cases table from the runner's case rows), run_stage.py (the `run` and
`census` stages: drives the runner), support_matrix.py, crossframework.py, aggregate/, reproduce/.

frameworks/: each framework's readers of its own test databases (census manifests, declared
support, NumPy namesakes) in one registry, looped over by census/ (`portability census-harvest`,
and the NN-op manifest that is no one framework's) and declared.py.

Outside the stages: reference.py and published.py (the study's data, `import_once` once),
frameworks/torch/xla.py (`portability torch-xla import`), scan/ (`portability scan`), bench.py and
bench_estimate.py (`portability bench`: this machine end to end). Shared by several stages: frames
(Arrow/plain conversions), params, subtests (supersession, pooling rows into subtests),
failure_reading, api_names, api_aliases, corpus and corpus_pinned, reference_quirks, import_once.

It may import the runner and the table layer, never the report or the dataset layer.
"""
