# The CI step for PyTorch on the litert path, sourced by .ci/run after .ci/xla.sh (tests/test_ci_litert.py
# runs it with a fake disk and pip): litert_start before the suite, litert_finish after it.
# litert-torch's pins move packages of .[all], so it has an environment of its own (.ci-venv-litert,
# 2.3 GB) where its real case runs, required (PORTABILITY_REQUIRE_LITERT_TORCH: no skip). Its install
# and its case (~45 s, mostly pip) run beside the suite where the disk holds them beside the others,
# niced so that the suite (CI's critical path) keeps the CPU; otherwise, or where the disk ran out
# beside the others, after the suite. An install that fails for any reason fails CI, with its log.
LITERT_VENV_GB=4 # the environment (2.3 GB) + pip's unpacking
install_litert() {
  local began; began=$(date +%s)
  (python3 -m venv .ci-venv-litert && .ci-venv-litert/bin/pip install -q -e ".[litert-torch]") \
    > .ci-venv-litert.log 2>&1 || return $?
  echo $(( $(date +%s) - began )) > .ci-venv-litert.seconds
}
litert_case() {
  PORTABILITY_REQUIRE_LITERT_TORCH=1 .ci-venv-litert/bin/python -m pytest -q -p no:typeguard \
    tests/test_edge_paths.py -k "torch-litert"
}
litert_install=""
litert_start() {
  rm -f .ci-venv-litert.seconds
  # beside only where the disk holds all three environments, so that the xla step's own choice
  # (beside the suite, after it, or not run) is what it was without this one
  if [ "$(free_gb)" -ge $((LITERT_VENV_GB + MAIN_VENV_GB + XLA_VENV_GB)) ]; then
    (
      renice -n 10 -p "$BASHPID" > /dev/null 2>&1 || true
      install_litert && litert_case > .ci-litert-case.log 2>&1
    ) &
    litert_install=$!
  fi
}
litert_finish() {
  local status=0
  if [ -n "$litert_install" ]; then
    wait "$litert_install" || status=$?
    if [ ! -f .ci-venv-litert.seconds ] && grep -q "No space left on device" .ci-venv-litert.log 2>/dev/null; then
      echo "the litert-torch environment ran out of disk beside the suite: installing it again alone"
      rm -rf .ci-venv-litert; litert_install=""
    fi
  fi
  if [ -z "$litert_install" ]; then
    status=0
    install_litert && litert_case > .ci-litert-case.log 2>&1 || status=$?
  fi
  if [ ! -f .ci-venv-litert.seconds ]; then
    echo "CI: the litert-torch environment did not install (.ci-venv-litert.log):"
    tail -20 .ci-venv-litert.log; exit 1
  fi
  echo "the litert-torch environment: installed in $(cat .ci-venv-litert.seconds) s" \
    "$([ -n "$litert_install" ] && echo "beside the suite" || echo "after the suite")"
  cat .ci-litert-case.log
  if [ "$status" -ne 0 ]; then echo "CI: PyTorch's litert case failed (above)"; exit "$status"; fi
}
