"""The `frequencies` stage (`portability frequencies`): build.py counts the corpus's calls into the
frequencies table; index.py (the API names and what imports bind), calls.py (one file's calls from
its tree, also `portability scan`'s reader), counting.py (records counted in worker processes) and
dask_engine.py (the same counter on a Dask cluster) are its parts. The corpus sources are
pipeline/corpus.py (shared with `sample`).
"""
