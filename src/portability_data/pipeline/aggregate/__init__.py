"""The `aggregate` stage (`portability aggregate`): build.py pools the result shards into the
outcomes and latencies tables; outcomes.py, latencies.py, quiet.py (which runs were contended) and
summaries.py (the headline tables) are its parts. The pooling into subtests it shares with other
stages is pipeline/subtests.py.
"""
