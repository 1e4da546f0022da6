"""The report: the study's tables and figures from ours, rendered to Markdown and offline HTML.

It reads tables and imports the pipeline's pure helpers (aggregate, reproduction); the pipeline
never imports it.
"""
