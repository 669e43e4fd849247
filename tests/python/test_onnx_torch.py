"""A torchvision network exported to ONNX, loaded with porta.onnx and run on each device, against torch.
Skipped where torch, torchvision or onnx is not installed (Debian: python3-torch, python3-torchvision,
python3-onnx)."""
import pytest
from conftest import assert_close

import porta

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def resnet18(tmp_path_factory):
    """resnet18 with seeded random weights, its ONNX file, an input and torch's output for it."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    image = torch.rand(2, 3, 64, 64)
    path = tmp_path_factory.mktemp("onnx") / "resnet18.onnx"
    torch.onnx.export(model, image, str(path), input_names=["input"], output_names=["output"], opset_version=13)
    with torch.no_grad():
        want = model(image).numpy()
    return path, image.numpy(), want


def test_resnet18_against_torch(device, resnet18):
    path, image, want = resnet18
    net = porta.onnx.load(str(path), batch=2)
    assert net.inputs == ["input"] and net.outputs == ["output"]
    got = device.compile(net).run(input=image)["output"]
    assert_close(got, want, tolerance=1e-3)


def test_onnx_errors(tmp_path):
    with pytest.raises(porta.Error) as e:
        porta.onnx.load(str(tmp_path / "missing.onnx"))
    assert e.value.code == porta.ErrorCode.IoError
    with pytest.raises(porta.Error) as e:
        porta.onnx.load_bytes(b"\xff\xff\xff")
    assert e.value.code == porta.ErrorCode.InvalidArgument
