"""Every case file runs under the portability harness (device pinning, timer, result records)."""

pytest_plugins = ["portability_data.runner.harness"]
