"""The steps of the data flow, one module per `dvc.yaml` stage (DESIGN.md "Data flow").

enumerate_api (the API), declared (what a framework declares per device), corpus + frequencies
(usage), sampling, case_rows + cases (the cases table), run_stage (drives the runner), reference +
published (the study's data), aggregate, reproduction; bench measures this machine end to end.
It may import the runner and the table layer, never the report or the dataset layer.
"""
