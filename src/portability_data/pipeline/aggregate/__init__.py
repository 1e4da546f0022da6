"""The `aggregate` stage (`portability aggregate`): build.py pools the result shards into the
outcomes, latencies and pooled tables; outcomes.py and latencies.py are its parts. The pooling into
subtests it shares with other stages is pipeline/subtests.py; the rules its readers apply too (a
subtest's status, which runs were contended) are readings/subtests.py and readings/quiet.py, and the
report's headline tables from its output are report/summaries.py.
"""
