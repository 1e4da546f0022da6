"""A worker's last words (runner.last_words), read from faulthandler dumps as the log holds them."""

from portability_data.runner.last_words import frames_of, last_words, short_path

DUMP = """some chatter of the case
Fatal Python error: Aborted

Thread 0x00007efe66b586c0 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 331 in wait

Current thread 0x00007efea8446b80 (most recent call first):
  File "/venv/lib/python3.11/site-packages/executorch/runtime/__init__.py", line 147 in execute
  File "/work/wt-e/src/portability_data/runner/devices/executorch.py", line 148 in __call__
  File "/work/wt-e/src/portability_data/runner/timing.py", line 77 in __call__
  File "/work/wt-e/cases/torch/census/test_opinfo.py", line 83 in run_one
  File "/work/wt-e/cases/torch/census/test_opinfo.py", line 86 in test_entry
  File "/venv/lib/python3.11/site-packages/_pytest/python.py", line 187 in pytest_pyfunc_call

Extension modules: numpy._core._multiarray_umath (total: 1)
"""


def test_the_signalled_threads_frames_name_the_framework_the_path_and_the_case() -> None:
    said = last_words(DUMP, "crash", ["iree-compile", "iree-compile"])
    assert said == (
        "at the crash: in executorch/runtime/__init__.py:147 execute, from runner/devices/executorch.py:148 "
        "__call__, from cases/torch/census/test_opinfo.py:83 run_one; running iree-compile"
    )


def test_a_single_threads_stack_is_read_too() -> None:
    single = (
        "Fatal Python error: Segmentation fault\n\nStack (most recent call first):\n"
        '  File "/r/cases/jax/test_x.py", line 9 in test_x\n'
    )
    assert last_words(single, "crash") == "at the crash: in cases/jax/test_x.py:9 test_x"


def test_no_dump_or_two_dumps_say_nothing() -> None:
    """Two dumps: another worker sharing the log died too, and which is whose cannot be told."""
    assert frames_of("a log without a dump\n") is None
    assert last_words(DUMP + DUMP, "timeout") is None


def test_paths_are_shortened_to_where_a_reader_finds_them() -> None:
    assert short_path("/root/.pyenv/versions/3.11.7/lib/python3.11/subprocess.py") == "subprocess.py"
    assert short_path("/x/site-packages/jax/_src/api.py") == "jax/_src/api.py"
    assert short_path("/elsewhere/tool.py") == "/elsewhere/tool.py"
