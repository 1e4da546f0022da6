"""The report: the study's tables and figures from ours, rendered to Markdown and offline HTML.

It reads tables and imports the pipeline's pure helpers (aggregate, reproduction); the pipeline
never imports it. Modules, lowest first: inputs (input tables, labels, orders, primary models);
outcomes, latency, then_now (one family of tables each); summary (the first screen) and metrics
(DVC metrics); figures and latency_figures (PNG figures); render (Markdown and HTML); build (the
`report` stage: build() and run_report()).
"""
