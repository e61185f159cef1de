"""The AWS CLI (PyPI `awscli`) against the S3 surface, configured with README.md's profile blocks verbatim:
`aws s3 cp --recursive`, `sync`, `ls --recursive` and `rm --recursive` of a directory tree (a 9 MiB file in it
goes up as a multipart upload), every object checked through v0."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from clientkit import BUCKET
from s3kit import S3Gateway, fill_readme, readme_block

AWS = str(Path(sys.executable).parent / "aws")


@pytest.fixture
def aws(s3: S3Gateway, tmp_path: Path):
    """Runs `aws --profile portcullis …` with only the README's files as configuration (the emulators' AWS_*
    variables, which point at moto, are removed: the CLI would prefer them to the profile)."""
    values = {"endpoint": s3.endpoint, "access-key-id": s3.admin.id, "secret-access-key": s3.admin.secret}
    config = tmp_path / "aws-config"
    config.write_text(fill_readme(readme_block("s3-aws-config"), values))
    credentials = tmp_path / "aws-credentials"
    credentials.write_text(fill_readme(readme_block("s3-aws-credentials"), values))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"AWS_CONFIG_FILE": str(config), "AWS_SHARED_CREDENTIALS_FILE": str(credentials)})

    env["PATH"] = str(Path(AWS).parent) + os.pathsep + env.get("PATH", "")

    def run(*args: str, codes: tuple[int, ...] = (0,), cwd: Path | None = None) -> str:
        command = [AWS, "--profile", "portcullis", *args] if args[0] != "bash" else list(args)
        out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
        assert out.returncode in codes, (args, out.returncode, out.stdout[-2000:], out.stderr[-2000:])
        return out.stdout
    return run


def make_tree(root: Path) -> dict[str, bytes]:
    files = {"a.txt": b"alpha\n", "sub/b.bin": os.urandom(100_000), "sub/deeper/c.txt": b"gamma\n",
             "odd name \u00e9.txt": b"accented\n", "big.bin": os.urandom(9 * (1 << 20) + 5)}
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)
    return files


def test_cp_sync_ls_rm_recursive(aws, s3: S3Gateway, tmp_path: Path) -> None:
    s3.require_multipart()
    tree = tmp_path / "tree"
    files = make_tree(tree)
    aws("s3", "cp", "--recursive", str(tree), f"s3://{BUCKET}/cli/tree/")
    for name, body in files.items():
        status, got = s3.v0_media(f"cli/tree/{name}")
        assert status == 200 and hashlib.sha256(got).digest() == hashlib.sha256(body).digest(), name

    listing = aws("s3", "ls", "--recursive", f"s3://{BUCKET}/cli/tree/")
    listed = {line.split(None, 3)[3]: int(line.split()[2]) for line in listing.splitlines() if line.strip()}
    assert listed == {f"cli/tree/{name}": len(body) for name, body in files.items()}
    folders = aws("s3", "ls", f"s3://{BUCKET}/cli/tree/")
    assert "PRE sub/" in folders and "a.txt" in folders and "deeper" not in folders

    (tree / "a.txt").write_bytes(b"alpha, changed\n")
    (tree / "new.txt").write_bytes(b"new\n")
    (tree / "sub" / "deeper" / "c.txt").unlink()
    synced = aws("s3", "sync", "--delete", str(tree), f"s3://{BUCKET}/cli/tree/")
    assert "upload: " in synced and "delete: " in synced
    assert s3.v0_media("cli/tree/a.txt") == (200, b"alpha, changed\n")
    assert s3.v0_media("cli/tree/new.txt") == (200, b"new\n")
    assert s3.v0_media("cli/tree/sub/deeper/c.txt")[0] == 404
    assert aws("s3", "sync", str(tree), f"s3://{BUCKET}/cli/tree/").strip() == "", "a second sync has nothing to do"

    back = tmp_path / "back"
    aws("s3", "cp", "--recursive", f"s3://{BUCKET}/cli/tree/", str(back))
    assert sorted(p.relative_to(back).as_posix() for p in back.rglob("*") if p.is_file()) == \
        sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    assert (back / "big.bin").read_bytes() == files["big.bin"]

    aws("s3", "rm", "--recursive", f"s3://{BUCKET}/cli/tree/")
    # `aws s3 ls` of an empty prefix prints nothing and exits 1.
    assert aws("s3", "ls", "--recursive", f"s3://{BUCKET}/cli/tree/", codes=(1,)).strip() == ""
    for name in files:
        assert s3.v0_media(f"cli/tree/{name}")[0] == 404


def test_readme_commands_run_as_written(aws, s3: S3Gateway, tmp_path: Path) -> None:
    """README's `aws` lines, with its example bucket name replaced by the one this gateway serves."""
    (tmp_path / "site" / "img").mkdir(parents=True)
    (tmp_path / "site" / "index.html").write_bytes(b"<h1>hello</h1>")
    (tmp_path / "site" / "img" / "logo.svg").write_bytes(b"<svg/>")
    script = readme_block("s3-aws-usage").replace("my-project.appspot.com", BUCKET)
    printed = aws("bash", "-euo", "pipefail", "-c", script, cwd=tmp_path)
    assert "site/index.html" in printed and "site/img/logo.svg" in printed
    presigned = printed.strip().splitlines()[-1]  # `aws s3 presign` prints the URL last
    assert presigned.startswith(s3.endpoint) and "X-Amz-Signature=" in presigned
    got = requests.get(presigned, timeout=20)
    assert got.status_code == 200 and got.content == b"<h1>hello</h1>"
    assert s3.v0_media("site/index.html") == (200, b"<h1>hello</h1>")
    assert s3.v0_media("site/img/logo.svg") == (200, b"<svg/>")
