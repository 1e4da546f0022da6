"""Hardware runs by pull request: package a contributor's runs, and check a submission mechanically.

The data on GPUs, TPUs and MPS comes from people who have them, so a run must be cheap to submit
and safe to review without rerunning it (as MLPerf's submission checker does for its results).

`package` copies the runs' shards and runs rows byte for byte into a folder and writes
`system.json`, the machine and code described from the runs rows. It needs pyarrow and json only,
so it works on a bare device machine beside `portability run`.

`check` treats every file as untrusted: a file must be plain Parquet by its magic bytes before
any reader touches it, is read by pyarrow against its contract (nothing is unpickled or
executed), then held to the rules a reviewer would apply by hand: the runs row matches its shard,
the harness and case digests are those of a commit of this repository, the run id is new, no
committed shard changes, the device and versions are named, the values are plausible, and a
complete run covers its cases. Every refusal is one line naming the file, the rule and the fix.

The modules: `files` (the folder layout, magic bytes and sha256 both sides share), `package`,
`history` (the digests of this repository's commits, from git objects), `problems` (what a check
reports), `run_rules` (the rules one run is held to) and `check` (the whole check).
"""
