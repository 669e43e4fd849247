"""One convolution layer on every device porta finds: its time, and its answer against ref."""
import numpy as np
import porta

g = porta.Graph()
x = g.input("x", (1, 32, 56, 56))
w = g.constant("w", np.random.default_rng(0).standard_normal((32, 32, 3, 3), np.float32) * 0.05)
g.output("y", g.conv2d(x, w, pad=(1, 1, 1, 1), activation="relu"))
image = np.random.default_rng(1).random((1, 32, 56, 56), np.float32)
want = porta.Device("ref").compile(g).run(x=image)["y"]
for info in porta.devices():
    exe = porta.Device(info.spec).compile(g)
    diff = np.abs(exe.run(x=image)["y"] - want).max()
    seconds, clock = exe.last_run_time
    print(f"{info.spec:20} {info.name:36} {seconds * 1e3:8.3f} ms ({clock})  max |diff| vs ref {diff:.1e}")
    assert diff < 1e-4, f"{info.spec} differs from ref"
