"""The `reproduce` stage (`portability reproduce`): build.py sets the study's printed numbers beside
ours into the reproduction table; study.py (the inputs and the evidence from the study's results rows)
and values.py (printed precision, and ours with its reason) are its parts.
"""
