"""Static checks of the shipped artefacts: Dockerfile (hadolint), OpenAPI document (openapi-spec-validator),
Kubernetes manifests (kubernetes-validate with its bundled, offline schemas) and the compose file.

Kubernetes: `kubectl kustomize` renders the base and each overlay when kubectl exists, and the rendered output is
validated. Without kubectl, every complete manifest (base resources and the overlays' own resources) is validated
file by file; the overlays' patches are partial documents and cannot be validated alone (docs/testing.md).
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
K8S = ROOT / "deploy" / "kubernetes"
K8S_VERSIONS = ["1.29.0", "1.33.0"]


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_hadolint_dockerfile() -> None:
    result = run(str(BIN / "hadolint"), "--config", ".hadolint.yaml", "Dockerfile")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", ["portcullis.yaml", "gcs-json.yaml"])
def test_openapi_document_is_valid(name: str) -> None:
    spec = ROOT / "openapi" / name
    assert spec.exists(), f"openapi/{name} is missing"
    result = run(str(BIN / "openapi-spec-validator"), str(spec))
    assert result.returncode == 0, result.stdout + result.stderr


def kustomizations() -> list[Path]:
    return sorted(p.parent for p in K8S.rglob("kustomization.yaml"))


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("directory", kustomizations(), ids=lambda p: str(p.relative_to(K8S)))
def test_kustomize_render_validates(directory: Path, version: str, tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed: files are validated individually instead")
    rendered = run(kubectl, "kustomize", str(directory))
    assert rendered.returncode == 0, rendered.stderr
    out = tmp_path / "rendered.yaml"
    out.write_text(rendered.stdout)
    kinds = {doc["kind"] for doc in yaml.safe_load_all(rendered.stdout) if doc}
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "ConfigMap", "Secret",
            "NetworkPolicy"} <= kinds
    result = run(str(BIN / "kubernetes-validate"), "--strict", "-k", version, str(out))
    assert result.returncode == 0, result.stdout + result.stderr


def complete_manifests() -> list[Path]:
    files = []
    for path in sorted(K8S.rglob("*.yaml")):
        if path.name == "kustomization.yaml" or path.name.endswith("-patch.yaml"):
            continue
        files.append(path)
    return files


@pytest.mark.parametrize("path", complete_manifests(), ids=lambda p: str(p.relative_to(K8S)))
def test_manifest_validates(path: Path) -> None:
    result = run(str(BIN / "kubernetes-validate"), "--strict", "-k", K8S_VERSIONS[0], str(path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_deployment_contract() -> None:
    """The Deployment: probes, drain, non-root/read-only/drop-all, anti-affinity, scrape annotations."""
    deployment = yaml.safe_load((K8S / "base" / "deployment.yaml").read_text())
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    gateway = next(c for c in pod["containers"] if c["name"] == "portcullis")
    assert spec["replicas"] == 3
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert gateway["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert "startupProbe" in gateway and "preStop" in gateway["lifecycle"]
    assert pod["terminationGracePeriodSeconds"] > 5 + 25  # preStop sleep + drain deadline
    assert gateway["securityContext"]["readOnlyRootFilesystem"] is True
    assert gateway["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert "podAntiAffinity" in pod["affinity"]
    assert gateway["resources"]["requests"] and gateway["resources"]["limits"]
    annotations = spec["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true" and annotations["prometheus.io/path"] == "/metrics"


def test_compose_file_shape() -> None:
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"portcullis", "fake-gcs"} <= services.keys()
    assert services["portcullis"]["environment"]["STORAGE_EMULATOR_HOST"].startswith("http://fake-gcs:")
    for secret in compose["secrets"].values():
        assert (ROOT / "deploy" / secret["file"]).exists()


def test_dockerfile_contract() -> None:
    """The Dockerfile: what hadolint cannot tell."""
    text = (ROOT / "Dockerfile").read_text()
    assert text.count("\nFROM ") >= 2, "multi-stage"
    for needle in ("USER 10001", "EXPOSE 8080", "PORTCULLIS_LISTEN=0.0.0.0:8080", "HEALTHCHECK",
                   "STOPSIGNAL SIGTERM", "org.opencontainers.image.title", "scripts/build-release.sh"):
        assert needle in text, needle


def test_shell_scripts_parse() -> None:
    for script in sorted((ROOT / "scripts").glob("*.sh")) + [ROOT / ".ci" / "run"]:
        result = run("bash", "-n", str(script))
        assert result.returncode == 0, f"{script}: {result.stderr}"
