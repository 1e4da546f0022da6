"""The publishing side: the dataset folder and its card, Croissant metadata, the loader, publishing
to the Hub, and hardware-run submissions by pull request.

It reads tables through the table layer and may use the runner's digests; the pipeline and the
runner never import it.
"""
