"""CI's Chromium (issue 57): where it is missing, apt installs it beside the environment's install
instead of before it, the browser tests wait for that install and are required once it succeeded,
and a failed install is said loudly. `.ci/run` runs here on the fakes of tests/test_ci_litert.py with
a fake apt-get; tests/browser.py, which the browser tests call, is driven directly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests import browser
from tests.test_ci_litert import fake_environment
from tests.test_ci_xla import write_executable

ABSENT = "chromium-not-installed-here"  # the browser's command as .ci/run looks for it in these tests
FAKE_APT = f"""#!/usr/bin/env bash
# apt-get: slow enough that the suite starts first; `install` puts a {ABSENT} beside itself where
# FAKE_APT is ok, else fails as an unreachable mirror does
echo "apt-get $*" >> apt-calls.log
sleep 2
[ "$1" = update ] && exit 0
if [ "$FAKE_APT" = ok ]; then
  made="$(dirname "$0")/{ABSENT}"
  printf '#!/usr/bin/env bash\\necho chromium\\n' > "$made"; chmod +x "$made"
  exit 0
fi
echo "E: Unable to locate package chromium"; exit 100
"""


def ci_with_apt(repo_root: Path, tmp_path: Path, apt: str) -> subprocess.CompletedProcess[str]:
    shutil.copytree(repo_root / ".ci", tmp_path / ".ci")
    write_executable(tmp_path / "fakes" / "apt-get", FAKE_APT)
    env = {**fake_environment(tmp_path, 40), "FAKE_APT": apt, "PORTABILITY_CI_CHROMIUM": ABSENT}
    return subprocess.run(
        ["bash", ".ci/run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_ci_installs_chromium_beside_the_environment_and_the_suite_waits_on_it(
    repo_root: Path, tmp_path: Path
) -> None:
    done = ci_with_apt(repo_root, tmp_path, "ok")
    assert done.returncode == 0, done.stdout + done.stderr
    status = tmp_path / ".ci-chromium.status"
    # the suite started while apt was still installing, and was told where its status will be
    assert f".venv python (niceness 0): PORTABILITY_BROWSER_PENDING={status} (pending) " in done.stdout
    assert status.read_text().strip() == "0" and (tmp_path / "fakes" / ABSENT).exists()
    assert "no Chromium could be installed" not in done.stdout
    assert done.stdout.index("CI phases: ") < done.stdout.index("CI wall time: ")


def test_a_failed_chromium_install_is_said_and_the_browser_tests_skip_with_why(
    repo_root: Path, tmp_path: Path
) -> None:
    done = ci_with_apt(repo_root, tmp_path, "broken")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CI: no Chromium could be installed (.ci-chromium.log)" in done.stdout
    calls = (tmp_path / "apt-calls.log").read_text().splitlines()
    assert calls == ["apt-get install -y -q chromium", "apt-get update -q", "apt-get install -y -q chromium"]
    assert (tmp_path / ".ci-chromium.status").read_text().strip() == "100"


@pytest.fixture
def no_browser_yet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A PATH with no Chromium, CI's variables unset, and located()'s memory cleared around the test."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    for name in ("PORTABILITY_BROWSER_PENDING", "PORTABILITY_REQUIRE_BROWSER"):
        monkeypatch.delenv(name, raising=False)
    browser.located.cache_clear()
    yield tmp_path
    browser.located.cache_clear()


def test_a_pending_install_that_succeeded_requires_the_browser(no_browser_yet: Path, monkeypatch) -> None:
    status = no_browser_yet / ".ci-chromium.status"
    status.write_text("0\n")
    monkeypatch.setenv("PORTABILITY_BROWSER_PENDING", str(status))
    with pytest.raises(RuntimeError, match="CI installed or promised Chromium but there is no Chromium"):
        browser.located()
    browser.located.cache_clear()
    write_executable(no_browser_yet / "bin" / "chromium", "#!/usr/bin/env bash\n")
    assert browser.browser() == str(no_browser_yet / "bin" / "chromium")


def test_a_failed_install_or_none_skips_with_why(no_browser_yet: Path, monkeypatch) -> None:
    assert browser.located() == (None, browser.MISSING)
    browser.located.cache_clear()
    status = no_browser_yet / ".ci-chromium.status"
    status.write_text("100\n")
    monkeypatch.setenv("PORTABILITY_BROWSER_PENDING", str(status))
    with pytest.raises(pytest.skip.Exception, match="CI could not install Chromium \\(apt exit status 100"):
        browser.browser()
    browser.located.cache_clear()
    monkeypatch.setenv("PORTABILITY_REQUIRE_BROWSER", "1")
    monkeypatch.delenv("PORTABILITY_BROWSER_PENDING")
    with pytest.raises(RuntimeError, match="no Chromium binary on the PATH"):
        browser.located()


def test_an_install_that_never_ends_or_a_garbled_status_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="did not end within 0 s"):
        browser.pending_install(tmp_path / "never", wait_s=0.0)
    (tmp_path / "garbled").write_text("installing\n")
    with pytest.raises(RuntimeError, match="should hold apt's exit status, not 'installing'"):
        browser.pending_install(tmp_path / "garbled", wait_s=0.0)
