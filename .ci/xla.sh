# The CI step for the xla device, sourced by .ci/run (tests/test_ci_xla.py runs it with a fake disk):
# xla_start before the suite, xla_finish after it. Where the disk holds the environment beside the
# others, it installs and its test runs beside the suite (issue 57: ~30 s off CI's critical path).
XLA_VENV_GB=11   # the environment (7.4 GB) + pip's unpacking + the suite's scratch files
MAIN_VENV_GB=5   # .venv (.[all]: 3.5 GB) + pip's unpacking
free_gb() { df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }'; }
install_xla() {
  local began; began=$(date +%s)
  (python3 -m venv .ci-venv-xla && .ci-venv-xla/bin/pip install -q --no-cache-dir -e ".[xla]") \
    > .ci-venv-xla.log 2>&1 || return $?
  echo $(( $(date +%s) - began )) > .ci-venv-xla.seconds
}
# The xla test in the environment's own interpreter (the core's pytest and pyarrow are there), as
# .ci/litert.sh runs the litert case: it needs nothing of .venv, so it can run before .venv exists.
xla_case() {
  PORTABILITY_XLA_PYTHON="$PWD/.ci-venv-xla/bin/python" PORTABILITY_REQUIRE_XLA=1 \
    .ci-venv-xla/bin/python -m pytest -q tests/test_xla_device.py
}
xla_install=""
xla_start() {
  rm -f .ci-venv-xla.seconds .ci-xla-case.log
  if [ "$(free_gb)" -ge $((XLA_VENV_GB + MAIN_VENV_GB)) ]; then
    # beside the suite: the install as fast as it goes (it overlaps .venv's), then the test niced,
    # so that the suite (CI's critical path) keeps the CPU; its output waits in .ci-xla-case.log
    (
      install_xla || exit $?
      renice -n 10 -p "$BASHPID" > /dev/null 2>&1 || true
      xla_case > .ci-xla-case.log 2>&1
    ) &
    xla_install=$!
  fi
}
xla_finish() {
  xla_status=0
  local case_status=0
  if [ -n "$xla_install" ]; then
    wait "$xla_install" || case_status=$?
    # installed (its seconds written): the status is the test's; otherwise the install's
    if [ ! -f .ci-venv-xla.seconds ]; then xla_status=$case_status; case_status=0; fi
  elif [ "$(free_gb)" -ge "$XLA_VENV_GB" ]; then
    install_xla || xla_status=$?
  else
    xla_status=-1
  fi
  if [ "$xla_status" -ne 0 ] && grep -q "No space left on device" .ci-venv-xla.log 2>/dev/null; then
    rm -rf .ci-venv-xla; xla_status=-1
  fi
  if [ "$xla_status" -eq -1 ]; then
    echo "NOT RUN: tests/test_xla_device.py: this machine has $(free_gb) GB free on $(pwd);" \
      "the xla environment needs ${XLA_VENV_GB} GB (run it where it fits: see docs/DEVICE_PATHS.md)"
  elif [ "$xla_status" -ne 0 ]; then
    echo "the xla environment did not install:"; tail -20 .ci-venv-xla.log; exit 1
  else
    # what the issue asks a note to show: the environment's install time and size, as CI found them
    echo "the xla environment: installed in $(cat .ci-venv-xla.seconds) s," \
      "$(du -sk .ci-venv-xla | awk '{ printf "%.1f", $1 / 1048576 }') GB" \
      "$([ -n "$xla_install" ] && echo "beside the suite" || echo "after the suite")"
    if [ ! -f .ci-xla-case.log ]; then xla_case > .ci-xla-case.log 2>&1 || case_status=$?; fi
    cat .ci-xla-case.log
    if [ "$case_status" -ne 0 ]; then echo "CI: the xla test failed (above)"; exit "$case_status"; fi
  fi
}
