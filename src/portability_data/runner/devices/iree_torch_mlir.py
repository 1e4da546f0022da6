"""The second PyTorch route to IREE (issue 53): torch-mlir's StableHLO lowering. The function under
test is exported (`torch.export`), imported and lowered by torch-mlir
(`torch_mlir.fx.export_and_import(..., output_type="stablehlo")`: torch-mlir's decompositions, the
torch dialect, its torch -> StableHLO conversion), and the StableHLO module is compiled by IREE for
the host CPU and run in its runtime, as on the `iree` path (iree.py: the stages, the runtime, the
versions). So PyTorch reaches IREE twice: through iree-turbine's torch dialect (`iree`) and through
StableHLO here, the portable layer JAX exports too; the census of both compares the two lowerings
op by op (an op torch-mlir cannot convert to StableHLO is `LowerError` with the op named).

torch-mlir publishes no torch pin in its wheel's metadata; its FX importer follows torch.export's
program format, and the census on the pinned torch is what says where the two part.
"""

from __future__ import annotations

from typing import Any

from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.compiled_only import refuse_eager
from portability_data.runner.devices.iree import (
    COMPILED_ONLY,
    INSTALL,
    LowerError,
    TorchIreeTurbine,
    require_packages,
)


class TorchIreeTorchMlir(TorchIreeTurbine):
    compiler = "torch_mlir"  # torch.export -> torch_mlir.fx (StableHLO) -> iree-compile
    input_type = "stablehlo"
    route = (
        "torch.export -> torch_mlir.fx.export_and_import (StableHLO) -> iree-compile "
        "--iree-input-type=stablehlo"
    )

    def find_device(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY.format(device=self.device))
        require_packages(self.device, "torch_mlir.fx")  # iree-turbine is not needed on this route

    def lower(self, exported: Any) -> tuple[str, Any]:
        """torch-mlir's StableHLO module, and the program it imported: decomposed with torch-mlir's
        own table, as `export_and_import` does by default (done here so that the program's
        signature says which inputs the module returns written). Its MLIR diagnostics (the op it
        could not convert) are caught in the error rather than printed to the process's stderr."""
        from torch_mlir import fx, ir
        from torch_mlir.dialects import torch as torch_d
        from torch_mlir.extras.fx_decomp_util import get_decomposition_table
        from torch_mlir.extras.fx_importer import FxImporter

        context = ir.Context()
        torch_d.register_dialect(context)
        diagnostics: list[str] = []

        def caught(diagnostic: Any) -> bool:
            diagnostics.append(f"error: {diagnostic.message}")
            return True

        context.attach_diagnostic_handler(caught)
        importer = FxImporter(context=context)
        try:
            decomposed = exported.run_decompositions(get_decomposition_table())
            stablehlo = fx.export_and_import(
                decomposed, output_type="stablehlo", fx_importer=importer, decomposition_table={}
            )
            return str(stablehlo), decomposed
        except Exception as error:
            left = str(importer.module)  # as far as the lowering got: the ops it could not convert remain
            raise LowerError(self.compiler, error, source=left, diagnostics=tuple(diagnostics)) from error


PATH = DevicePath(
    name="iree_torch_mlir",
    summary="PyTorch lowered to StableHLO by torch-mlir, compiled by IREE for the host CPU (llvm-cpu) "
    "and run in the IREE runtime; compiled mode only",
    backends={"torch": TorchIreeTorchMlir},
    needs=f"the iree extra: {INSTALL}",
    not_served={
        "jax": "JAX exports StableHLO itself: the iree path",
        "tensorflow": "torch-mlir lowers PyTorch programs only",
    },
    what_to_do=f"run it in compiled mode (--mode compiled) with IREE and torch-mlir installed: {INSTALL}",
    runtime="iree",
)
