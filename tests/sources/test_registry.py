"""The registry source against real Debian docker-registry servers (plain, TLS+basic, token).

Images come from tests/support/imagebuilder.py; faults come from tests/support/faultproxy.py.
Every test pushes content unique to itself (blobs are shared across repositories in the
registry's storage, and some tests corrupt them).
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
import uuid
from dataclasses import replace

import pytest

from imagelint.digest import VerifyingReader
from imagelint.errors import EXIT_UNREADABLE, DigestMismatchError, ImagelintError, RegistryError, SourceError
from imagelint.image import Platform
from imagelint.reference import ImageReference, parse_registry_name
from imagelint.sources import SourceOptions
from imagelint.sources.registry import RegistryClient, open_registry, read_images
from imagelint.sources.registry_auth import clear_token_cache, load_credentials, parse_challenges
from tests.support.faultproxy import Fault, FaultProxy
from tests.support.imagebuilder import File, ImageSpec, LayerSpec, build_index

pytestmark = pytest.mark.registry


def unique_image(tag: str = "", **kw) -> ImageSpec:
    """An image whose blobs no other test shares."""
    marker = uuid.uuid4().hex.encode()
    layers = kw.pop("layers", None) or [[File("etc/marker", marker), File("usr/bin/app", b"\x7fELF" + marker)]]
    return ImageSpec(layers=layers, env={"CUDA_VERSION": "12.4.1", "MARK": marker.decode()[:8]}, **kw)


def repo() -> str:
    return f"t/{uuid.uuid4().hex[:10]}"


def opts(**kw) -> SourceOptions:
    kw.setdefault("backoff", 0.001)
    kw.setdefault("timeout", 5.0)
    kw.setdefault("docker_config", "/nonexistent-imagelint-docker-config")
    return SourceOptions(**kw)


def open_name(name: str, options: SourceOptions) -> tuple[list, RegistryClient]:
    client = RegistryClient(parse_registry_name(name), options)
    return read_images(client, options), client


def answered(client: RegistryClient) -> list:
    """Requests that got an HTTP response (drops the failed https probe of an insecure registry)."""
    return [rec for rec in client.log if rec.status is not None]


def layer_members(layer) -> dict[str, bytes]:
    with layer.open() as stream:
        blob = stream.read()
    if layer.compression == "gzip":
        blob = gzip.decompress(blob)
    elif layer.compression == "zstd":
        import zstandard

        blob = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)).read()
    with tarfile.open(fileobj=io.BytesIO(blob)) as tf:
        return {m.name: tf.extractfile(m).read() for m in tf if m.isfile()}


def assert_no_secret(text: str, *secrets: str) -> None:
    for secret in secrets:
        if secret:
            assert secret not in text


# --- plain registry: formats and selection -------------------------------------------------------


def test_oci_image_by_tag_and_by_digest(plain_registry):
    built = unique_image(labels={"com.example": "yes"}, annotations={"org.opencontainers.image.title": "app"}).build()
    r = repo()
    plain_registry.push(r, "1.0", built)
    o = opts(insecure_registries=(plain_registry.host,))

    [image], client = open_name(f"{plain_registry.host}/{r}:1.0", o)
    assert image.ref == f"{plain_registry.host}/{r}:1.0"
    assert image.source == "registry"
    assert image.digest == built.digest
    assert image.config_digest == built.config_digest
    assert image.index_digest is None
    assert image.manifest_media_type == "application/vnd.oci.image.manifest.v1+json"
    assert image.config.env_map["CUDA_VERSION"] == "12.4.1"
    assert image.config.labels["com.example"] == "yes"
    assert image.annotations["org.opencontainers.image.title"] == "app"
    assert [l.diff_id for l in image.layers] == built.diff_ids
    # The https probe of an insecure registry fails, then plain HTTP is used.
    assert client.log[0].url.startswith("https://") and client.log[0].status is None
    # A config-only read costs exactly the manifest and the config: no layer byte yet.
    assert [(rec.method, rec.url.rsplit("/", 2)[-2]) for rec in answered(client)] == [("GET", "manifests"), ("GET", "blobs")]
    assert layer_members(image.layers[0])["etc/marker"]
    assert len(answered(client)) == 3

    [by_digest] = open_registry(ImageReference("registry", f"{plain_registry.host}/{r}@{built.digest}"), o)
    assert by_digest.digest == built.digest and by_digest.config == image.config


def test_a_loopback_registry_is_insecure_by_default_as_dockers(plain_registry):
    """Issue 38: ``check localhost:5000/...`` on a plain-HTTP registry said ``TLS error:
    WRONG_VERSION_NUMBER``. Docker treats 127.0.0.0/8 (and localhost) as insecure registries by
    default: HTTPS first, then plain HTTP. Other hosts still need --insecure-registry, and a loopback
    registry that speaks TLS is still verified (test_tls_without_the_ca_is_a_certificate_error)."""
    from imagelint.sources.registry import is_loopback

    r = repo()
    built = unique_image().build()
    plain_registry.push(r, "1", built)
    port = plain_registry.host.rpartition(":")[2]
    for host in (plain_registry.host, f"localhost:{port}"):
        [image], _ = open_name(f"{host}/{r}:1", opts())
        assert image.digest == built.digest
    assert [is_loopback(h) for h in ("localhost", "127.0.0.1", "127.3.2.1", "::1", "[::1]")] == [True] * 5
    assert not any(is_loopback(h) for h in ("registry.example", "10.0.0.1", "localhost.example", "0.0.0.0"))


def test_missing_tag_says_so(plain_registry):
    r = repo()
    plain_registry.push(r, "1", unique_image().build())
    with pytest.raises(RegistryError) as err:
        open_name(f"{plain_registry.host}/{r}:nope", opts(insecure_registries=(plain_registry.host,)))
    msg = str(err.value)
    assert "tag 'nope' not found" in msg and "MANIFEST_UNKNOWN" in msg and r in msg and plain_registry.host in msg


def _push_multiarch(registry, docker: bool = False) -> tuple[str, object, object, object]:
    amd = unique_image(docker_media_types=docker).build()
    arm = unique_image(architecture="arm64", variant="v8", docker_media_types=docker).build()
    index = build_index([amd, arm], docker=docker)
    r = repo()
    registry.push(r, "multi", index)
    return r, amd, arm, index


def test_multiarch_index_platform_selection(plain_registry):
    r, amd, arm, index = _push_multiarch(plain_registry)
    name = f"{plain_registry.host}/{r}:multi"
    insecure = (plain_registry.host,)

    [default], _ = open_name(name, opts(insecure_registries=insecure))
    assert default.platform == Platform("linux", "amd64")
    assert default.digest == amd.digest and default.index_digest == index.digest

    [arm_image], _ = open_name(name, opts(insecure_registries=insecure, platform=Platform.parse("linux/arm64"),
                                           platform_explicit=True))
    assert arm_image.digest == arm.digest and arm_image.platform == Platform("linux", "arm64", "v8")

    images, client = open_name(name, opts(insecure_registries=insecure, all_platforms=True))
    assert sorted(str(i.platform) for i in images) == ["linux/amd64", "linux/arm64/v8"]
    # index + 2 manifests, still no layer bytes: both configs come from the cache the two opens
    # above filled (a config is content-addressed); without a cache, each is fetched again.
    assert [rec.url.rsplit("/", 2)[-2] for rec in answered(client)] == ["manifests"] * 3
    _, uncached = open_name(name, opts(insecure_registries=insecure, all_platforms=True, no_cache=True))
    assert len(answered(uncached)) == 5  # index + 2 × (manifest + config)

    with pytest.raises(SourceError) as err:
        open_name(name, opts(insecure_registries=insecure, platform=Platform.parse("linux/s390x"), platform_explicit=True))
    assert "linux/s390x" in str(err.value) and "linux/amd64, linux/arm64/v8" in str(err.value)


def test_docker_schema2_image_and_manifest_list(plain_registry):
    built = unique_image(docker_media_types=True).build()
    r = repo()
    plain_registry.push(r, "v2", built)
    o = opts(insecure_registries=(plain_registry.host,))
    [image], _ = open_name(f"{plain_registry.host}/{r}:v2", o)
    # Asked with the right Accept, the registry does not downgrade to schema 1 (another digest).
    assert image.digest == built.digest
    assert image.manifest_media_type == "application/vnd.docker.distribution.manifest.v2+json"
    assert image.layers[0].compression == "gzip"

    r2, amd, arm, index = _push_multiarch(plain_registry, docker=True)
    [arm_image], _ = open_name(f"{plain_registry.host}/{r2}:multi",
                               opts(insecure_registries=(plain_registry.host,), platform=Platform.parse("arm64")))
    assert arm_image.digest == arm.digest and arm_image.index_digest == index.digest
    assert layer_members(arm_image.layers[0]) == layer_members_of(arm)


def layer_members_of(built) -> dict[str, bytes]:
    _, blob, _, _ = built.layers[0]
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob))) as tf:
        return {m.name: tf.extractfile(m).read() for m in tf if m.isfile()}


def test_zstd_layer_streams_and_decompresses(plain_registry):
    payload = os.urandom(300_000)
    built = unique_image(layers=[LayerSpec([File("opt/data.bin", payload)], compression="zstd")]).build()
    r = repo()
    plain_registry.push(r, "z", built)
    [image], _ = open_name(f"{plain_registry.host}/{r}:z", opts(insecure_registries=(plain_registry.host,)))
    layer = image.layers[0]
    assert layer.compression == "zstd" and layer.size == len(built.layers[0][1])
    assert layer_members(layer)["opt/data.bin"] == payload


def test_corrupted_blobs_are_refused(plain_registry):
    built = unique_image(layers=[[File("etc/a", os.urandom(5000))]]).build()
    r = repo()
    plain_registry.push(r, "bad", built)
    o = opts(insecure_registries=(plain_registry.host,))
    layer_digest, blob, _, _ = built.layers[0]
    path = plain_registry.blob_path(layer_digest)
    assert path.read_bytes() == blob
    path.write_bytes(bytes([blob[0] ^ 0xFF]) + blob[1:])  # same size, one byte flipped

    [image], _ = open_name(f"{plain_registry.host}/{r}:bad", o)  # the layer is not read yet
    with pytest.raises(DigestMismatchError) as err, image.layers[0].open() as stream:
        while stream.read(1024):
            pass
    assert err.value.exit_code == EXIT_UNREADABLE and layer_digest in str(err.value)

    config_path = plain_registry.blob_path(built.config_digest)
    config_path.write_bytes(config_path.read_bytes().replace(b"12.4.1", b"12.4.9"))
    with pytest.raises(DigestMismatchError) as err:
        open_name(f"{plain_registry.host}/{r}:bad", replace(o, no_cache=True))
    assert "config" in str(err.value) and built.config_digest in str(err.value)
    # The verified copy the first open kept is the config this digest names; the registry's is not asked for.
    [cached], client = open_name(f"{plain_registry.host}/{r}:bad", o)
    assert cached.config.env_map["CUDA_VERSION"] == "12.4.1" and "blobs" not in str(client.log)


def test_a_config_is_fetched_once_and_then_read_from_the_cache(plain_registry, tmp_path):
    built = unique_image().build()
    r = repo()
    plain_registry.push(r, "1", built)
    name = f"{plain_registry.host}/{r}:1"
    o = opts(insecure_registries=(plain_registry.host,), cache_dir=str(tmp_path / "cache"))
    [first], cold = open_name(name, o)
    [warm], hot = open_name(name, o)
    assert [rec.url.rsplit("/", 2)[-2] for rec in answered(cold)] == ["manifests", "blobs"]
    assert [rec.url.rsplit("/", 2)[-2] for rec in answered(hot)] == ["manifests"]  # a warm check asks for no config
    assert warm.config == first.config and warm.config_digest == built.config_digest

    # The cache is untrusted: an entry that is not the blob the digest names is a miss, fetched and replaced.
    from imagelint.layers.cache import LayerCache, document_key

    store = LayerCache(tmp_path / "cache")
    key = document_key("config", built.config_digest)
    real = store.get(key)
    assert real is not None
    store.put(key, real.replace(b"12.4.1", b"12.4.9"))  # same size, another digest
    [again], refetched = open_name(name, o)
    assert again.config.env_map["CUDA_VERSION"] == "12.4.1"
    assert [rec.url.rsplit("/", 2)[-2] for rec in answered(refetched)] == ["manifests", "blobs"]
    assert store.get(key) == real

    # --no-cache: nothing read from the cache, nothing written to it.
    other = tmp_path / "other"
    [_], uncached = open_name(name, replace(o, cache_dir=str(other), no_cache=True))
    assert [rec.url.rsplit("/", 2)[-2] for rec in answered(uncached)] == ["manifests", "blobs"]
    assert not other.exists()


def test_configs_kept_by_one_process_walk_its_cache_directory_once(plain_registry, tmp_path, monkeypatch):
    """The config store is the process's one store of that directory (``layers.cache.open_cache``):
    its size is walked at the first write, not at every image's (an audit opens thousands)."""
    from imagelint.layers.cache import LayerCache, open_cache

    walks = []
    real_files = LayerCache._files
    monkeypatch.setattr(LayerCache, "_files", lambda self: walks.append(self.directory) or real_files(self))
    cache = tmp_path / "cache"
    o = opts(insecure_registries=(plain_registry.host,), cache_dir=str(cache))
    for tag in ("1", "2", "3"):
        r = repo()
        plain_registry.push(r, tag, unique_image().build())
        [_], client = open_name(f"{plain_registry.host}/{r}:{tag}", o)
        assert [rec.url.rsplit("/", 2)[-2] for rec in answered(client)] == ["manifests", "blobs"]
    assert walks == [cache]
    assert open_cache(str(cache), False) is open_cache(str(cache), False)


@pytest.mark.parametrize("written", [
    {"extra_config": {"config": {"Env": ["PATH=/usr/bin", "HF_TOKEN=hf-s3cret-in-env"]}}},
    {"extra_config": {"history": [{"created_by": "RUN |1 HF_TOKEN=hf-s3cret-in-a-build-arg /bin/sh -c make"}]}},
    {"labels": {"registry-password": "s3cret-in-a-label"}},
])
def test_a_config_that_may_hold_a_secret_is_never_written_to_the_cache(plain_registry, tmp_path, written):
    built = unique_image(**written).build()
    r = repo()
    plain_registry.push(r, "1", built)
    cache = tmp_path / "cache"
    o = opts(insecure_registries=(plain_registry.host,), cache_dir=str(cache))
    for _ in range(2):  # fetched each time: nothing was kept
        [image], client = open_name(f"{plain_registry.host}/{r}:1", o)
        assert [rec.url.rsplit("/", 2)[-2] for rec in answered(client)] == ["manifests", "blobs"]
    assert image.config_digest == built.config_digest
    assert not any(b"s3cret" in f.read_bytes() for f in cache.rglob("*") if f.is_file())


def test_layer_opener_returns_a_verifying_stream(plain_registry):
    built = unique_image().build()
    r = repo()
    plain_registry.push(r, "v", built)
    [image], client = open_name(f"{plain_registry.host}/{r}:v", opts(insecure_registries=(plain_registry.host,)))
    stream = image.layers[0].open()
    assert isinstance(stream, VerifyingReader)
    assert stream.read() == built.layers[0][1]
    stream.close()


# --- TLS + basic auth ------------------------------------------------------------------------------


def test_tls_basic_with_ca_and_docker_config(tls_registry, tmp_path):
    built = unique_image().build()
    r = repo()
    tls_registry.push(r, "1", built)
    config_dir = tls_registry.docker_config_dir(tmp_path / "docker")
    [image], client = open_name(f"{tls_registry.host}/{r}:1",
                                opts(ca_cert=tls_registry.ca_cert, docker_config=str(config_dir)))
    assert image.digest == built.digest
    assert [rec.status for rec in client.log] == [401, 200, 200]  # anonymous first, then basic
    assert layer_members(image.layers[0])["etc/marker"]


def test_docker_config_env_var_is_honoured(tls_registry, tmp_path, monkeypatch):
    built = unique_image().build()
    r = repo()
    tls_registry.push(r, "1", built)
    monkeypatch.setenv("DOCKER_CONFIG", str(tls_registry.docker_config_dir(tmp_path / "env-docker")))
    o = SourceOptions(ca_cert=tls_registry.ca_cert, backoff=0.001)  # docker_config unset: $DOCKER_CONFIG
    [image], _ = open_name(f"{tls_registry.host}/{r}:1", o)
    assert image.digest == built.digest


def test_tls_wrong_password_is_a_clear_401_without_the_password(tls_registry, tmp_path):
    r = repo()
    tls_registry.push(r, "1", unique_image().build())
    wrong = "wr0ng-secret-pw-xyz"
    config_dir = tls_registry.docker_config_dir(tmp_path / "docker", password=wrong)
    with pytest.raises(RegistryError) as err:
        open_name(f"{tls_registry.host}/{r}:1", opts(ca_cert=tls_registry.ca_cert, docker_config=str(config_dir)))
    msg = str(err.value)
    assert "401" in msg and "rejected" in msg and tls_registry.host in msg and r in msg
    assert_no_secret(msg, wrong, tls_registry.password)
    import base64

    assert_no_secret(msg, base64.b64encode(f"{tls_registry.username}:{wrong}".encode()).decode())


def test_tls_without_credentials_says_authentication_is_required(tls_registry):
    r = repo()
    tls_registry.push(r, "1", unique_image().build())
    with pytest.raises(RegistryError) as err:
        open_name(f"{tls_registry.host}/{r}:1", opts(ca_cert=tls_registry.ca_cert))
    assert "authentication required" in str(err.value) and "UNAUTHORIZED" in str(err.value)


def test_tls_without_the_ca_is_a_certificate_error(tls_registry):
    with pytest.raises(RegistryError) as err:
        open_name(f"{tls_registry.host}/x/y:1", opts())
    msg = str(err.value)
    assert "certificate" in msg.lower() and "--ca-cert" in msg and tls_registry.host in msg


def test_insecure_registry_accepts_unverified_tls(tls_registry, tmp_path):
    built = unique_image().build()
    r = repo()
    tls_registry.push(r, "1", built)
    config_dir = tls_registry.docker_config_dir(tmp_path / "docker")
    [image], client = open_name(f"{tls_registry.host}/{r}:1",
                                opts(insecure_registries=(tls_registry.host,), docker_config=str(config_dir)))
    assert image.digest == built.digest
    assert all(rec.url.startswith("https://") for rec in client.log)  # unverified TLS, not plain HTTP


def test_insecure_tls_never_loads_the_system_ca_store(tls_registry, tmp_path, monkeypatch):
    """Nothing is verified for an insecure registry, so no CA store (~50 ms to load) is read;
    a verified registry still gets its certificates checked (the test above without the CA fails)."""
    import ssl

    loads: list[str] = []

    def counting(name):  # type: ignore[no-untyped-def]
        real = getattr(ssl.SSLContext, name)

        def load(self, *a, **k):  # type: ignore[no-untyped-def]
            loads.append(name)
            return real(self, *a, **k)

        return load

    built = unique_image().build()
    r = repo()
    tls_registry.push(r, "1", built)
    for name in ("load_default_certs", "load_verify_locations"):
        monkeypatch.setattr(ssl.SSLContext, name, counting(name))
    config_dir = tls_registry.docker_config_dir(tmp_path / "docker")
    [image], _ = open_name(f"{tls_registry.host}/{r}:1",
                           opts(insecure_registries=(tls_registry.host,), docker_config=str(config_dir)))
    assert image.digest == built.digest and loads == []
    with pytest.raises(RegistryError):  # the same host, not named insecure: verified, and it fails
        open_name(f"{tls_registry.host}/{r}:1", opts(docker_config=str(config_dir)))
    assert loads, "the verified path loads the CA store (the probe can see it)"


def test_a_loopback_registry_is_tried_over_tls_without_reading_the_ca_store(plain_registry, tls_registry, tmp_path,
                                                                           monkeypatch):
    """A loopback registry is tried over HTTPS first, and most speak plain HTTP (a CI job's registry
    service, kind's): that first try trusts no CA, so the CA store (~50 ms, a sixth of a check of a
    cached image) is read only for one that speaks TLS, whose handshake then runs again against it."""
    import ssl

    from imagelint.sources import http as transport

    loaded: list[tuple] = []
    real = ssl.SSLContext.load_verify_locations

    def counting(self, *a, **k):  # type: ignore[no-untyped-def]
        loaded.append(a or tuple(k.values()))
        return real(self, *a, **k)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    monkeypatch.setattr(ssl.SSLContext, "load_default_certs", lambda self, *a: loaded.append(("system",)))
    built = unique_image().build()
    r = repo()
    plain_registry.push(r, "1", built)
    [image], client = open_name(f"{plain_registry.host}/{r}:1", opts())
    assert image.digest == built.digest and loaded == []
    assert client.log[0].url.startswith("https://") and client.log[0].status is None  # the TLS try, refused
    assert all(rec.url.startswith("http://") for rec in client.log[1:])

    # A loopback registry that speaks TLS with a certificate the default store trusts: the try fails
    # on the certificate (it trusts none), the handshake runs again against the store, and every
    # request goes over verified TLS.
    tls_registry.push(r, "1", built)
    loaded.clear()  # (the push's own client reads the CA)
    monkeypatch.setattr(transport, "_default_ca_bundle", lambda: tls_registry.ca_cert)
    config_dir = tls_registry.docker_config_dir(tmp_path / "docker")
    [image], client = open_name(f"{tls_registry.host}/{r}:1", opts(docker_config=str(config_dir)))
    assert image.digest == built.digest and [where[0] for where in loaded] == [tls_registry.ca_cert]
    assert client.log[0].status is None and all(rec.url.startswith("https://") for rec in client.log)
    assert all(rec.status is not None for rec in client.log[1:])


# --- bearer tokens -------------------------------------------------------------------------------------


def test_token_auth_end_to_end(token_registry, tmp_path):
    built = unique_image().build()
    r = repo()
    token_registry.push(r, "1", built)
    config_dir = token_registry.docker_config_dir(tmp_path / "docker")
    o = opts(ca_cert=token_registry.ca_cert, docker_config=str(config_dir))
    [image], client = open_name(f"{token_registry.host}/{r}:1", o)
    assert image.digest == built.digest
    assert layer_members(image.layers[0])["etc/marker"]
    pulls = [q for q in token_registry.token_server.requests_for(r) if q.scopes == (f"repository:{r}:pull",)]
    assert len(pulls) == 1
    assert pulls[0].user == token_registry.username and pulls[0].service == "imagelint-test-registry"
    # The token is cached for the process: a second open asks the token server nothing.
    _, second = open_name(f"{token_registry.host}/{r}:1", o)
    assert len([q for q in token_registry.token_server.requests_for(r) if q.scopes == (f"repository:{r}:pull",)]) == 1
    assert second.requests_made == 1  # the manifest: the config is the one the first open kept


def test_token_anonymous_pull_of_a_public_repository(token_registry):
    built = unique_image().build()
    r = f"public/{uuid.uuid4().hex[:8]}"
    token_registry.push(r, "1", built)
    [image], _ = open_name(f"{token_registry.host}/{r}:1", opts(ca_cert=token_registry.ca_cert))
    assert image.digest == built.digest
    [req] = [q for q in token_registry.token_server.requests_for(r) if q.scopes == (f"repository:{r}:pull",)]
    assert req.user is None and not req.had_password


def test_token_anonymous_on_a_private_repository_is_refused(token_registry):
    r = repo()
    token_registry.push(r, "1", unique_image().build())
    with pytest.raises(RegistryError) as err:
        open_name(f"{token_registry.host}/{r}:1", opts(ca_cert=token_registry.ca_cert))
    assert "401" in str(err.value) and "authentication required" in str(err.value)


def test_token_with_identity_token_uses_the_refresh_grant(token_registry, tmp_path):
    from tests.support.registry import DEFAULT_IDENTITY_TOKEN

    built = unique_image().build()
    r = repo()
    token_registry.push(r, "1", built)
    config_dir = token_registry.docker_config_dir(tmp_path / "docker", identity_token=DEFAULT_IDENTITY_TOKEN)
    [image], _ = open_name(f"{token_registry.host}/{r}:1", opts(ca_cert=token_registry.ca_cert, docker_config=str(config_dir)))
    assert image.digest == built.digest
    [req] = [q for q in token_registry.token_server.requests_for(r) if q.method == "POST"]
    assert req.grant_type == "refresh_token" and req.user == token_registry.username


def test_token_access_token_field_is_accepted(token_registry, tmp_path):
    built = unique_image().build()
    r = repo()
    token_registry.push(r, "1", built)
    token_registry.token_server.broken[r] = "access_token"
    config_dir = token_registry.docker_config_dir(tmp_path / "docker")
    [image], _ = open_name(f"{token_registry.host}/{r}:1", opts(ca_cert=token_registry.ca_cert, docker_config=str(config_dir)))
    assert image.digest == built.digest


@pytest.mark.parametrize("mode, expected", [("garbage", "no token"), ("500", "HTTP 500"), ("no-token", "no token")])
def test_broken_token_endpoint_is_a_clear_error(token_registry, tmp_path, mode, expected):
    r = repo()
    token_registry.push(r, "1", unique_image().build())
    token_registry.token_server.broken[r] = mode
    config_dir = token_registry.docker_config_dir(tmp_path / "docker")
    with pytest.raises(RegistryError) as err:
        open_name(f"{token_registry.host}/{r}:1",
                  opts(ca_cert=token_registry.ca_cert, docker_config=str(config_dir), retries=1))
    msg = str(err.value)
    assert "fetching token" in msg and expected in msg and r in msg
    assert_no_secret(msg, token_registry.password)


def test_token_wrong_password_is_rejected_without_leaking(token_registry, tmp_path):
    r = repo()
    token_registry.push(r, "1", unique_image().build())
    config_dir = token_registry.docker_config_dir(tmp_path / "docker", password="n0t-the-right-0ne")
    with pytest.raises(RegistryError) as err:
        open_name(f"{token_registry.host}/{r}:1", opts(ca_cert=token_registry.ca_cert, docker_config=str(config_dir)))
    assert "fetching token" in str(err.value) and "rejected" in str(err.value)
    assert_no_secret(str(err.value), "n0t-the-right-0ne")


# --- retries, resets, stalls, redirects (fault proxy) ----------------------------------------------------


@pytest.fixture
def plain_proxy(plain_registry):
    proxy = FaultProxy(plain_registry.url)
    yield proxy
    proxy.stop()


def _proxied(proxy, registry, **kw):
    built = unique_image(layers=[[File("opt/blob.bin", os.urandom(200_000))]]).build()
    r = repo()
    registry.push(r, "1", built)
    return f"{proxy.host}/{r}:1", built, opts(insecure_registries=(proxy.host,), **kw)


def test_503_is_retried_then_succeeds(plain_registry, plain_proxy):
    name, built, o = _proxied(plain_proxy, plain_registry, retries=3)
    plain_proxy.add(Fault("503", "/manifests/", times=2))
    [image], _ = open_name(name, o)
    assert image.digest == built.digest
    assert [s.outcome for s in plain_proxy.seen("/manifests/")] == ["503", "503", "forwarded"]


def test_429_honours_retry_after(plain_registry, plain_proxy):
    name, built, o = _proxied(plain_proxy, plain_registry, retries=2)
    plain_proxy.add(Fault("429", "/manifests/", times=1, retry_after="1"))
    started = time.monotonic()
    [image], _ = open_name(name, o)
    assert time.monotonic() - started >= 0.95  # backoff alone would be ~1 ms
    assert image.digest == built.digest
    plain_proxy.add(Fault("429", "/blobs/", times=1))  # no Retry-After: exponential backoff
    [again], _ = open_name(name, replace(o, no_cache=True))  # the config is fetched again, not taken from the cache
    assert [s.outcome for s in plain_proxy.seen("/blobs/")][-2:] == ["429", "forwarded"]


def test_gives_up_after_the_retry_bound(plain_registry, plain_proxy):
    name, _, o = _proxied(plain_proxy, plain_registry, retries=2)
    plain_proxy.add(Fault("503", "/manifests/", times=-1))
    with pytest.raises(RegistryError) as err:
        open_name(name, o)
    msg = str(err.value)
    assert "fetching manifest 1" in msg and "HTTP 503" in msg and "UNAVAILABLE" in msg and "3 attempts" in msg
    assert len(plain_proxy.seen("/manifests/")) == 3


def test_connection_reset_mid_blob_resumes_with_range(plain_registry, plain_proxy):
    name, built, o = _proxied(plain_proxy, plain_registry, retries=2)
    [image], _ = open_name(name, o)
    plain_proxy.add(Fault("reset", "/blobs/sha256:" + built.layers[0][0].split(":")[1], times=1))
    assert layer_members(image.layers[0])["opt/blob.bin"] == layer_members_of(built)["opt/blob.bin"]
    blob_requests = plain_proxy.seen(built.layers[0][0])
    assert [s.outcome for s in blob_requests] == ["reset", "forwarded"]
    assert blob_requests[1].range and blob_requests[1].range.startswith("bytes=") and blob_requests[1].range != "bytes=0-"


def test_immediate_rst_on_a_blob_is_retried(plain_registry, plain_proxy):
    name, built, o = _proxied(plain_proxy, plain_registry, retries=2)
    [image], _ = open_name(name, o)
    plain_proxy.add(Fault("rst", built.layers[0][0], times=1))
    with image.layers[0].open() as stream:
        assert stream.read() == built.layers[0][1]
    assert [s.outcome for s in plain_proxy.seen(built.layers[0][0])] == ["rst", "forwarded"]


def test_connection_reset_every_time_gives_up(plain_registry, plain_proxy):
    name, built, o = _proxied(plain_proxy, plain_registry, retries=2)
    [image], _ = open_name(name, o)
    plain_proxy.add(Fault("reset", built.layers[0][0], times=-1))
    with pytest.raises(RegistryError) as err, image.layers[0].open() as stream:
        stream.read()
    assert "fetching blob sha256:" in str(err.value) and "connection lost" in str(err.value)
    assert len(plain_proxy.seen(built.layers[0][0])) == 3


def test_stall_times_out_and_is_retried(plain_registry, plain_proxy):
    name, built, o = _proxied(plain_proxy, plain_registry, retries=2, timeout=0.3)
    plain_proxy.add(Fault("stall", "/manifests/", times=1, stall_seconds=0.8))
    [image], _ = open_name(name, o)
    assert image.digest == built.digest
    plain_proxy.add(Fault("stall", "/manifests/", times=-1, stall_seconds=0.6))
    with pytest.raises(RegistryError) as err:
        open_name(name, opts(insecure_registries=(plain_proxy.host,), retries=1, timeout=0.2))
    assert "timed out" in str(err.value)


def test_cross_host_redirect_never_carries_credentials(tls_registry, tmp_path):
    proxy = FaultProxy(tls_registry.url, verify=tls_registry.ca_cert)
    try:
        name, built, o = _proxied(proxy, tls_registry, retries=1,
                                  docker_config=str(tls_registry.docker_config_dir(tmp_path / "docker", host=proxy.host)))
        proxy.add(Fault("redirect", "/blobs/", times=-1))
        [image], client = open_name(name, o)
        assert image.digest == built.digest
        assert layer_members(image.layers[0])["opt/blob.bin"] == layer_members_of(built)["opt/blob.bin"]
        assert len(proxy.storage.seen) == 2  # config + layer went through storage
        assert all(auth is None for _, auth in proxy.storage.seen)
        assert all(s.authorization for s in proxy.seen("/blobs/"))  # the registry itself did get them
        assert all("X-Signature" not in rec.url for rec in client.log)  # presigned queries are not logged
    finally:
        proxy.stop()


def test_cross_host_redirect_with_bearer_token(token_registry, tmp_path):
    proxy = FaultProxy(token_registry.url, verify=token_registry.ca_cert)
    try:
        name, built, o = _proxied(proxy, token_registry, ca_cert=token_registry.ca_cert,
                                  docker_config=str(token_registry.docker_config_dir(tmp_path / "docker", host=proxy.host)))
        proxy.add(Fault("redirect", "/blobs/", times=-1))
        [image], _ = open_name(name, o)
        with image.layers[0].open() as stream:
            assert stream.read() == built.layers[0][1]
        assert proxy.storage.seen and all(auth is None for _, auth in proxy.storage.seen)
        assert all((s.authorization or "").startswith("Bearer ") for s in proxy.seen("/blobs/"))
    finally:
        proxy.stop()


# --- credentials and challenges (real docker config files, real helper process) ---------------------------


def test_challenge_parsing():
    [bearer] = parse_challenges('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"')
    assert bearer.scheme == "bearer" and bearer.params["realm"] == "https://auth.example/token"
    assert bearer.params["scope"] == "repository:a/b:pull"
    basic, bearer2 = parse_challenges('Basic realm="x", Bearer realm="https://t/x",service=svc')
    assert basic.scheme == "basic" and bearer2.params == {"realm": "https://t/x", "service": "svc"}


def test_credentials_from_a_credential_helper(tmp_path, monkeypatch):
    helper = tmp_path / "bin" / "docker-credential-imagelinttest"
    helper.parent.mkdir()
    helper.write_text(
        "#!/bin/sh\nread server\n"
        'if [ "$server" = "reg.example:5000" ]; then echo \'{"Username":"bob","Secret":"helper-s3cret"}\'; '
        "else echo 'credentials not found in native keychain'; exit 1; fi\n"
    )
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{helper.parent}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "config.json").write_text('{"credHelpers": {"reg.example:5000": "imagelinttest"}}')
    creds = load_credentials("reg.example:5000", str(tmp_path))
    assert creds is not None and creds.username == "bob" and creds.password == "helper-s3cret"
    assert "helper-s3cret" not in repr(creds)
    assert load_credentials("other.example", str(tmp_path)) is None


def test_docker_hub_credentials_use_the_index_key(tmp_path):
    import base64

    auth = base64.b64encode(b"hubuser:hubpass").decode()
    (tmp_path / "config.json").write_text(f'{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{auth}"}}}}}}')
    name = parse_registry_name("ubuntu")
    creds = load_credentials(name.registry, str(tmp_path))
    assert name.api_host == "registry-1.docker.io"
    assert creds is not None and (creds.username, creds.password) == ("hubuser", "hubpass")


def test_every_error_is_one_line_exit_3(plain_registry):
    with pytest.raises(ImagelintError) as err:
        open_name("127.0.0.1:1/x/y:1", opts(insecure_registries=("127.0.0.1:1",), retries=1))
    assert err.value.exit_code == EXIT_UNREADABLE and "\n" not in str(err.value)
    assert "127.0.0.1:1" in str(err.value) and "connection" in str(err.value)


@pytest.fixture(autouse=True)
def _fresh_tokens():
    clear_token_cache()
    yield


def test_a_registry_that_never_answers_says_the_numbers_it_used():
    """Issue 38: 'timed out after 5 attempt(s) (timeout 30s) … (read timeout=10.0)' named a bound
    no attempt had. The message now gives the attempts, the time they took and each one's bound."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_hold() -> None:  # accepts every connection, never sends a byte
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept_and_hold, daemon=True)
    thread.start()
    host = f"127.0.0.1:{listener.getsockname()[1]}"
    try:
        with pytest.raises(RegistryError) as err:
            open_name(f"{host}/x/y:1", opts(timeout=0.3, retries=2, insecure_registries=(host,)))
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
    msg = str(err.value)
    assert "no answer: 3 attempt(s) over" in msg and "each waited 0.3 s for data; --timeout sets it" in msg, msg
    assert "(timeout 30s)" not in msg
