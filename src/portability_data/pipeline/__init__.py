"""The steps of the data flow (docs/ARCHITECTURE.md, "Data flow"): one entry module per `dvc.yaml`
stage, with its parts beside it as `<stage>_*.py` when it grows past one screenful of concerns.

enumerate_api (the API), declared (what a framework declares per device), corpus + frequencies
(usage), sampling, cases (the cases table from the runner's case rows), run_stage (drives the
runner), reference + published (the study's data), aggregate, reproduction; `frames` holds the
Arrow/plain conversions they share; bench measures this machine end to end. It may import the
runner and the table layer, never the report or the dataset layer.
"""
