"""--images: the images GPU-node pods run, read config-only from a real registry (check's core)."""

from __future__ import annotations

from tests.doctor.clusters import clone, healthy_state, pod
from tests.support.imagebuilder import ImageSpec

# An official CUDA base image's own env (what `docker inspect` shows for nvidia/cuda:*-base).
CUDA_BASE_ENV = {
    "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/sbin:/usr/bin",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
}


def _block(lines, number):
    start = next(i for i, line in enumerate(lines) if line.startswith(f"stage {number} "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("stage ")), len(lines))
    return "\n".join(lines[start:end])


def test_cpu_only_pod_whose_image_says_all_gpus_under_default_nvidia_runtime(run_doctor, plain_registry):
    plain_registry.push("tools/cuda-utils", "1.0", ImageSpec(env={**CUDA_BASE_ENV, "CUDA_VERSION": "12.2.2"}).build())
    image = f"{plain_registry.host}/tools/cuda-utils:1.0"
    state = clone(healthy_state())
    state.pods.append(pod("tools", "log-shipper-7", node="gpu-a-2", gpus=None, image=image))
    # without --images the image's env is unknown: nothing claimed, and the report says so
    run = run_doctor(state)
    assert run.exit_code == 0
    assert "images' own env not read (use --images)" in run.output
    run = run_doctor(state, "--images", "--insecure-registry", plain_registry.host, kube=run.kube)
    assert run.exit_code == 1, run.output
    assert "stage 6 (isolation" in run.lines[0] and "pod tools/log-shipper-7" in run.lines[0]
    block = _block(run.lines, 6)
    assert f"evidence: Image {image} config Env: NVIDIA_VISIBLE_DEVICES=all" in block
    assert "default runtime: nvidia=true" in block
    assert "fix: Set NVIDIA_VISIBLE_DEVICES=void" in block


def test_image_too_new_for_the_node_driver_is_stage_5(run_doctor, plain_registry):
    env = {**CUDA_BASE_ENV, "CUDA_VERSION": "12.8.1",
           "NVIDIA_REQUIRE_CUDA": "cuda>=12.8 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=535,driver<536"}
    plain_registry.push("ml/train", "cu128", ImageSpec(env=env).build())
    image = f"{plain_registry.host}/ml/train:cu128"
    state = clone(healthy_state())
    state.pods.append(pod("ml", "train-new-0", node="gpu-a-2", image=image, phase="Running"))
    run = run_doctor(state, "--images", "--insecure-registry", plain_registry.host)
    assert run.exit_code == 1, run.output
    block = _block(run.lines, 5)
    # config-only: the image's NVIDIA_REQUIRE_CUDA against the node's driver (IL102)
    assert "pod ml/train-new-0: image" in block and "does not fit node gpu-a-2: IL102" in block
    assert "evidence: Image" in block and "cuda>=12.8" in block and "driver 550.54.15" in block


def test_unreadable_image_is_a_warning_not_the_end(run_doctor, plain_registry):
    state = clone(healthy_state())
    state.pods.append(pod("ml", "ghost", node="gpu-a-1", image=f"{plain_registry.host}/nope/missing:1"))
    run = run_doctor(state, "--images", "--insecure-registry", plain_registry.host)
    assert run.exit_code == 0, run.output
    assert "warning: image" in run.output and "nope/missing:1: not read" in run.output


def test_the_digest_the_node_pulled_is_read_not_the_tag_as_it_is_now(run_doctor, plain_registry):
    from tests.doctor.clusters import container_status

    old = ImageSpec(env={**CUDA_BASE_ENV, "CUDA_VERSION": "12.2.2"}).build()
    plain_registry.push("tools/agent", "stable", old)
    digest = old.digest
    # the tag moved to an image that says void since the node pulled the old one
    plain_registry.push("tools/agent", "stable", ImageSpec(env={"NVIDIA_VISIBLE_DEVICES": "void"}).build())
    image = f"{plain_registry.host}/tools/agent:stable"
    state = clone(healthy_state())
    p = pod("tools", "agent-1", node="gpu-a-1", gpus=None, image=image)
    status = container_status("main", image)
    status["imageID"] = f"{plain_registry.host}/tools/agent@{digest}"
    p["status"]["containerStatuses"] = [status]
    state.pods.append(p)
    run = run_doctor(state, "--images", "--insecure-registry", plain_registry.host)
    assert run.exit_code == 1, run.output
    assert "requests no GPU but sees GPUs all of node gpu-a-1" in run.lines[0]


def test_pulled_reference_forms():
    from imagelint.doctor.images import pulled_reference

    d = "sha256:" + "a" * 64
    assert pulled_reference("nvcr.io/nvidia/cuda:12.4.1-base", f"nvcr.io/nvidia/cuda@{d}") == f"nvcr.io/nvidia/cuda@{d}"
    assert pulled_reference("localhost:5000/app:1", f"docker-pullable://localhost:5000/app@{d}") == f"localhost:5000/app@{d}"
    assert pulled_reference("busybox", f"docker.io/library/busybox@{d}") == f"busybox@{d}"
    assert pulled_reference("app:1", "sha256:" + "b" * 64) == "app:1"  # an image id (config digest), not a manifest digest
    assert pulled_reference("app:1", "") == "app:1"
