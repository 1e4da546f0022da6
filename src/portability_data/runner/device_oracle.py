"""The census's judge on every device path: each sample is held to what can judge it, and the row
says which oracles did and how many of its samples they judged (issues 48 and 50).

- The independent reference where the entry has one (an OpInfo's NumPy `ref`, a ModuleInfo's
  reference function, NumPy on the same host arrays), as oracle.Judgement holds it.
- On a device that is not the host CPU, in eager mode: the host CPU's result of the same sample,
  its inputs copied to the host before the call under test (the differential oracle,
  Timer.host_twin), as torch_xla's own OpInfo test compares each XLA result with the CPU's. The
  comparison uses the census's per-dtype policy (params.yaml census.tolerances: torch.testing's
  defaults, loosened where upstream loosens the same comparison) rather than torch_xla's flat
  atol=rtol=1e-3: one policy for every comparison, so a device row and its CPU row are judged
  alike; the deviation columns keep how far it was, for a reader who would judge at 1e-3.
  A sample the host cannot run has no differential comparison (the reference may still judge it).
- Compiled mode: eager on the same device (the census module's `expected`), as before.

A row's `oracle` joins the oracles that judged at least one sample (`reference+cpu`, `cpu`,
`numpy`, `eager`; `none`); `samples_compared` counts the samples some oracle judged. `works`
claims all of them (pipeline/support_matrix.py): a passing row with a sample nothing judged is
`ran`. A generator that raises before any sample exists is SampleBuildError, the status
`no_sample`: nothing of the function under test ran.

The samples are built as the framework's own tests build them (Timer.building_samples): torch's
generators take the device as an argument, with no default device around them.

Imported by census modules (their digest holds its bytes: provenance.CENSUS_INPUT_FILES).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from portability_data.runner.oracle import NO_ORACLE, Judgement, ValuesOffOracle, deviation, kept

REFERENCE, CPU = "reference", "cpu"


class SampleBuildError(RuntimeError):
    """The sample generator raised before any sample existed: nothing of the function ran."""


Twin = Callable[[], Any] | None  # the same call on the host CPU (Timer.host_twin), or none


class DeviceJudgement(Judgement):
    """The samples of one census subtest, judged by the reference and, off the host, the CPU."""

    def __init__(
        self,
        tolerances: dict[str, dict[str, float]],
        timed: Any,
        seed: Callable[[int], Any] | None = None,
    ) -> None:
        """`seed`: the framework's seeding (torch.manual_seed): the host twin then runs under two
        seeds, and a result that changes with the seed (dropout, rand_like) has no differential
        comparison, as compiled mode's eager oracle has none for it."""
        super().__init__(tolerances)
        self.timed, self.seed = timed, seed
        self.judged = {REFERENCE: 0, CPU: 0}  # oracle -> samples it judged

    def build(self, make: Callable[[], Iterable[Any]], where: Any) -> list[Any]:
        """The samples `make` yields, built as the framework's tests build them; a generator that
        raises is SampleBuildError naming the device and the generator's own error."""
        try:
            with self.timed.building_samples():
                return list(make())
        except Exception as error:
            raise SampleBuildError(
                f"no sample could be built on {where}: {type(error).__name__}: {error}"
            ) from error

    def twin(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Twin:
        """The call for the host CPU, its inputs copied now (None on the host, or in compiled mode)."""
        return self.timed.host_twin(fn, *args, **kwargs)

    def run(  # type: ignore[override]
        self,
        samples: list[Any],
        run_one: Callable[[Any], tuple[Any, Any, Twin]],
        label: Callable[[Any], str] | None = None,
    ) -> None:
        """Each sample through `run_one`, which calls the function under test through `timed` and
        returns (result, reference or NO_ORACLE, its host twin or None); judged by both."""
        self.samples = len(samples)
        for sample in samples:
            named = label(sample) if label else None
            try:
                actual, expected, twin = run_one(sample)
                self.judge_both(actual, expected, twin, named)
            except Exception as error:  # the function raised, or its values left the tolerance
                if named and not isinstance(error, ValuesOffOracle):
                    error.add_note(named)
                self.failed_with(error)

    def judge_both(self, actual: Any, expected: Any, twin: Twin, label: str | None = None) -> None:
        """Hold one sample's result to the reference and to the host's result; raise
        ValuesOffOracle naming each oracle it left."""
        problems = []
        if expected is not NO_ORACLE:
            problems.append(self._against(actual, expected, REFERENCE))
        host = self._host_result(twin)
        if host is not NO_ORACLE:
            problems.append(self._against(actual, host, CPU))
        if expected is not NO_ORACLE or host is not NO_ORACLE:
            self.compared += 1
        off = "; ".join(p for p in problems if p)
        if off:
            raise ValuesOffOracle(f"{label}: {off}" if label else off)

    def _host_result(self, twin: Twin) -> Any:
        """The host CPU's result of the sample; NO_ORACLE without a twin, where the host raised
        (nothing on the host can judge the device's result) or where it changes with the seed."""
        if twin is None:
            return NO_ORACLE
        try:
            if self.seed is None:
                return twin()
            results = []
            for seed in (0, 1):
                self.seed(seed)
                results.append(twin())
        except Exception:
            return NO_ORACLE
        if deviation(results[0], results[1], self.tolerances)[2] is not None:
            return NO_ORACLE
        return results[0]

    def _against(self, actual: Any, expected: Any, oracle: str) -> str | None:
        abs_error, rel_error, problem = deviation(actual, expected, self.tolerances)
        self.judged[oracle] += 1
        self.worst_abs, self.worst_rel = max(self.worst_abs, abs_error), max(self.worst_rel, rel_error)
        if problem is None:
            return None
        return problem if oracle == REFERENCE else f"off the host CPU's result of the same sample: {problem}"

    def record(self, record_property: Any, oracle: str) -> None:
        """Report the measures (harness.MEASURES): `oracle` names the reference (reference, numpy,
        numpy_32bit, eager), joined with `cpu` where the host judged; re-raise the first error."""
        names = [name for name, key in ((oracle, REFERENCE), (CPU, CPU)) if self.judged[key]]
        record_property("oracle", "+".join(names) or "none")
        record_property("samples", self.samples)
        record_property("samples_failed", self.failed)
        record_property("samples_compared", self.compared)
        record_property("max_abs_error", kept(self.worst_abs) if self.compared else None)
        record_property("max_rel_error", kept(self.worst_rel) if self.compared else None)
        if self.first_error is not None:
            raise self.first_error
