"""The installs skip pip's byte-compiling (issue 57): the README's commands and CI's environments say
`--no-compile`, and the README's reason quotes the committed benchmark that measured it, which a
re-run on a small folder shows measures what it says (bytecode written under its own prefix)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

RESULT = REPO_ROOT / "benchmarks" / "results" / "bench_install_compile.json"


def test_every_install_of_ci_and_the_readme_skips_the_byte_compiling() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    first, second = (block.split("```")[0] for block in readme.split("```bash\n")[1:3])
    assert "pip install -q --no-compile -e" in first and "pip install -q --no-compile -e" in second
    for script in ("run", "xla.sh", "litert.sh"):
        text = (REPO_ROOT / ".ci" / script).read_text()
        pip_lines = [line for line in text.splitlines() if "/pip install" in line]
        assert pip_lines and all("--no-compile" in line for line in pip_lines), script


def test_the_readme_quotes_the_committed_install_benchmark() -> None:
    result = json.loads(RESULT.read_text())
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert f"all {result['py_files']:,} Python files of the environment" in readme
    assert f"{result['at_install']['cpu_s']:.0f} s of CPU" in readme
    assert f"imports compile on first use in {result['on_import']['cpu_s']:.0f} s" in readme
    assert result["on_import"]["cpu_s"] < result["at_install"]["cpu_s"]  # else the flag costs time


def test_the_benchmark_compiles_under_its_own_prefix_and_leaves_the_folder_alone(tmp_path: Path) -> None:
    packages = tmp_path / "site"
    (packages / "pkg").mkdir(parents=True)
    for name in ("__init__", "a", "b"):
        (packages / "pkg" / f"{name}.py").write_text(f"VALUE = {name!r}\n" * 50)
    out = tmp_path / "result.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "benchmarks" / "bench_install_compile.py"),
            "--site-packages",
            str(packages),
            "--imports",
            "json,email.mime.text,not_a_module_here",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert (result["py_files"], result["imports"]) == (3, ["json", "email.mime.text"])
    assert result["not_installed"] == ["not_a_module_here"]
    assert "not installed here, not imported: not_a_module_here" in done.stdout
    # the stdlib modules the import arm reached were compiled into its empty prefix, none in place
    assert result["bytecode_files_written_on_import"] > 0
    assert not list(packages.rglob("*.pyc"))
    assert result["at_install"]["cpu_s"] > 0 and result["first_import_cold"]["cpu_s"] > 0
