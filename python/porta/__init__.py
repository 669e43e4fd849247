"""porta: build an op graph once, compile it for any device, run it; numpy arrays in and out.

    import numpy as np, porta
    g = porta.Graph()
    x = g.input("x", (8, 64), "f32")
    w = g.constant("w", np.random.rand(64, 32).astype(np.float32))
    g.output("y", g.relu(g.matmul(x, w)))
    y = porta.Device("cpu").compile(g).run(x=np.ones((8, 64), np.float32))["y"]

f16 arrays are numpy.float16; bf16 arrays are ml_dtypes.bfloat16 where ml_dtypes is installed, else
numpy.uint16 holding the bf16 bit patterns (the high half of the float32's bits). See docs/python.md.
"""
import sys as _sys

from ._porta import Device, DeviceInfo, Error, ErrorCode, Executable, Graph, Tensor, autodiff, devices, models, onnx

# `import porta.onnx`, `import porta.models` and `import porta.autodiff` work as well as attribute access.
_sys.modules[__name__ + ".onnx"] = onnx
_sys.modules[__name__ + ".models"] = models
_sys.modules[__name__ + ".autodiff"] = autodiff

__all__ = ["Device", "DeviceInfo", "Error", "ErrorCode", "Executable", "Graph", "Tensor", "autodiff", "devices",
           "models", "onnx"]
