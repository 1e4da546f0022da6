"""How the tables read: the rules that both a stage writing a table (pipeline/) and a reader of it
(report/, dataset/, `portability scan`) apply, written once so that each reads a row the same way,
and so that the readers never import a stage (the import-linter contract `readers-read-tables`).

frames (Arrow-backed and plain frames), subtests (a subtest's rows as one status), quiet (which
runs' latencies count), canonical (a function's canonical name), samples (the study's frequency
buckets), crossframework (its groups and rankings), reproduction (equal counts), torch_xla (its
declared lists read back), knowledge (what the dataset knows of a function, per path), params
(the error for a malformed params.yaml). pandas and the tables layer only; no framework.
"""
