"""rclone (Debian's package) against the S3 surface, with README.md's remote block verbatim: `copy`, `ls`,
`sync` and `check` of a directory tree, objects checked through v0."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from clientkit import BUCKET
from s3kit import S3Gateway, fill_readme, readme_block

RCLONE = shutil.which("rclone")
pytestmark = pytest.mark.skipif(RCLONE is None, reason="rclone not installed (apt rclone; `make test` installs it)")


@pytest.fixture
def rclone(s3: S3Gateway, tmp_path: Path):
    config = tmp_path / "rclone.conf"
    config.write_text(fill_readme(readme_block("s3-rclone-config"),
                                  {"endpoint": s3.endpoint, "access-key-id": s3.admin.id,
                                   "secret-access-key": s3.admin.secret}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "RCLONE_"))}
    env.update({"RCLONE_CONFIG": str(config), "RCLONE_RETRIES": "1", "RCLONE_LOW_LEVEL_RETRIES": "1"})

    def run(*args: str, codes: tuple[int, ...] = (0,), cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        command = [str(RCLONE), *args] if args[0] != "bash" else list(args)
        out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
        assert out.returncode in codes, (args, out.returncode, out.stdout[-2000:], out.stderr[-2000:])
        return out
    return run


def test_copy_ls_sync_check(rclone, s3: S3Gateway, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    files = {"a.txt": b"alpha\n", "sub/b.bin": os.urandom(70_000), "sub/deeper/c.txt": b"gamma\n",
             "big.bin": os.urandom(6 * (1 << 20) + 1)}
    for name, body in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(body)
    remote = f"portcullis:{BUCKET}/rclone/tree"
    rclone("copy", str(tree), remote)
    for name, body in files.items():
        assert s3.v0_media(f"rclone/tree/{name}") == (200, body), name
    listed = {line.split(None, 1)[1]: int(line.split(None, 1)[0]) for line in rclone("ls", remote).stdout.splitlines()}
    assert listed == {name: len(body) for name, body in files.items()}
    rclone("check", str(tree), remote)

    (tree / "a.txt").write_bytes(b"alpha, changed\n")
    (tree / "sub" / "deeper" / "c.txt").unlink()
    (tree / "new.txt").write_bytes(b"new\n")
    different = rclone("check", str(tree), remote, codes=(1,))
    assert "3 differences found" in different.stderr, different.stderr[-1000:]
    rclone("sync", str(tree), remote)
    assert s3.v0_media("rclone/tree/a.txt") == (200, b"alpha, changed\n")
    assert s3.v0_media("rclone/tree/new.txt") == (200, b"new\n")
    assert s3.v0_media("rclone/tree/sub/deeper/c.txt")[0] == 404
    rclone("check", str(tree), remote)

    # A change made through v0 is what rclone sees: the same object.
    s3.v0_upload("rclone/tree/sub/b.bin", b"rewritten through v0")
    assert rclone("check", str(tree), remote, codes=(1,)).returncode == 1
    rclone("purge", remote)
    assert rclone("ls", remote, codes=(0, 3)).stdout.strip() == ""  # 3: rclone's "directory not found"


def test_readme_commands_run_as_written(rclone, s3: S3Gateway, tmp_path: Path) -> None:
    """README's rclone lines, with its example bucket name replaced by the one this gateway serves."""
    (tmp_path / "photos" / "2026").mkdir(parents=True)
    (tmp_path / "photos" / "2026" / "cat.jpg").write_bytes(os.urandom(20_000))
    (tmp_path / "photos" / "dog.jpg").write_bytes(os.urandom(30_000))
    rclone("bash", "-euo", "pipefail", "-c", readme_block("s3-rclone-usage").replace("my-project.appspot.com", BUCKET),
           cwd=tmp_path)
    assert s3.v0_media("photos/2026/cat.jpg") == (200, (tmp_path / "photos" / "2026" / "cat.jpg").read_bytes())
    assert s3.v0_media("photos/dog.jpg") == (200, (tmp_path / "photos" / "dog.jpg").read_bytes())
