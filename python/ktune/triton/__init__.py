"""Triton kernels tuned, verified and served by ktune.

- compile.py: one config of a `@triton.jit` kernel compiled ahead of time (no GPU needed);
- description.py: the kernel described as a ktune kernel folder whose candidates are those cubins;
- tune.py: `ktune tune` on that folder, and the winner read back;
- autotune.py: `autotune`, the drop-in for `triton.autotune`;
- prune.py: its `prune_configs_by`, applied per key when the key is tuned;
- reference_data.py: a torch function as the reference (`TorchReference`), its outputs saved per key;
- misses.py: the key file of untuned calls;
- offline.py: `python -m ktune.triton tune FILE [--shard I/N]`: a key file's keys (or one shard of them)
  tuned in one `ktune tune` run.
"""

from .autotune import Autotuner, autotune
from .compile import CompiledConfig, compile_config, config_name, kernel_key
from .description import Arg, CudaReference, Description, input_buffer, output_buffer, scalar
from .misses import read_keys, record_miss
from .offline import tune_file
from .prune import BufferStandIn, Pruner, key_arguments
from .reference_data import TorchReference
from .tune import best, cache_root, tune

__all__ = ["Arg", "Autotuner", "BufferStandIn", "CompiledConfig", "CudaReference", "Description", "Pruner", "autotune",
           "best", "cache_root", "compile_config", "config_name", "input_buffer", "key_arguments", "kernel_key",
           "output_buffer", "read_keys", "record_miss", "scalar", "TorchReference", "tune", "tune_file"]
