"""The native "spyre" PyTorch device: tensors resident in the simulated card's DDR, eager ops
compiled and run by the device model, streams and events in simulated time.

    import torch                       # the device registers itself: the torch.backends entry
    x = torch.ones(3).to("spyre")      # point (TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns it off;
                                       # then spyre_mlir.torch_device.register() does it)

The C++ part (csrc/) is built on first use and cached (extension.py). See docs/device.md.
"""

from __future__ import annotations

import warnings

_REGISTERED = False
_LIBRARIES: list = []


def register() -> None:
    """Make "spyre" a PyTorch device (PrivateUse1 renamed): idempotent."""
    global _REGISTERED
    if _REGISTERED:
        return
    import torch

    from spyre_mlir.torch_device import api, eager, extension, kernels

    extension.module()  # the allocator, guard, hooks and view kernels
    if torch._C._get_privateuse1_backend_name() != "spyre":
        torch.utils.rename_privateuse1_backend("spyre")
    torch._register_device_module("spyre", api)
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
    impl = torch.library.Library("aten", "IMPL")
    kernels.register(impl)
    fallback = torch.library.Library("_", "IMPL")
    fallback.fallback(kernels.untraced(eager.fallback), "PrivateUse1")
    _LIBRARIES.extend([impl, fallback])  # kept: a Library dropped unregisters its kernels
    _print_from_the_host()
    if torch.distributed.is_available():
        from spyre_mlir.distributed import backend

        backend.register()  # init_process_group("spyre")
    _REGISTERED = True


def _print_from_the_host() -> None:
    """Print a spyre tensor from one host copy of it. PyTorch's formatter computes on the
    tensor's own device in float64, which the card does not hold (and would compile a graph
    per statistic); the values printed are the device's all the same."""
    import torch._tensor_str as tensor_str

    original = tensor_str._str

    def _str(self, *, tensor_contents=None):
        if self.device.type != "spyre" or tensor_contents is not None:
            return original(self, tensor_contents=tensor_contents)
        text = original(self.detach().cpu())
        return f"{text[:-1]}, device='{self.device}')"

    tensor_str._str = _str


def _autoload() -> None:
    """The `torch.backends` entry point: register, but never break `import torch` for the
    compiler's users (a device that cannot be built or registered is warned about once;
    `spyre_mlir.torch_device.register()` raises why)."""
    try:
        register()
    except Exception as e:
        warnings.warn(f"spyre: the native device is not available: {type(e).__name__}: {e}", stacklevel=2)
