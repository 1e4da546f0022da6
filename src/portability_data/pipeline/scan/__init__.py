"""`portability scan` (not a dvc.yaml stage): what the dataset knows of each framework call in a
user's code. findings.py finds the calls and their status per device path, knowledge.py reads the
tables into that knowledge (the explorer reads them the same way), output.py writes the three outputs.
"""
