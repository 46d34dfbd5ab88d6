"""The stand-in writers write what the real loaders read, and the marker is honoured.

Every dataset is written at a few images in its exact format and read back through the project's
loaders (torchvision's layouts); the same files without their marker fail the
release's checksum with the usual message; whatever is read from a marked root is labelled a
rehearsal stand-in. Full-size counts are the real datasets' (torchvision's documentation, the
UCI and SVHN pages); one slow test writes MNIST at full size.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np
import pytest

from privrepro.config import ConfigError
from privrepro.data import DamagedDataError, MissingDataError, load_dataset
from privrepro.data.provenance import REHEARSAL_MARKER, data_source_of
from privrepro.data.standin_checks import checksum_status, read_marker, standin_md5
from privrepro.rehearsal.standins import STANDINS, write_standin, write_standins
from privrepro.rehearsal.standins.arrays import CIFAR10_CLASSES, CIFAR100_FINE
from privrepro.rehearsal.standins.folders import IMAGENET_R_WNIDS

SMALL = {
    "cifar10": {"train": 20, "test": 10},
    "cifar100": {"train": 200, "test": 100},
    "mnist": {"train": 20, "test": 10},
    "fashionmnist": {"train": 20, "test": 10},
    "svhn": {"train": 20, "test": 10},
    "notmnist": {"images": 60, "unreadable": 2},
    "imagenet-r": {"images": 400},
    "adult": {"train": 200, "test": 100},
}


def _remove_markers(root: Path) -> None:
    for marker in root.rglob(REHEARSAL_MARKER):
        marker.unlink()


def _balanced(y: np.ndarray, classes: int) -> bool:
    counts = np.bincount(y, minlength=classes)
    return bool(counts.max() - counts.min() <= 1)


def test_full_size_counts_are_the_real_datasets() -> None:
    """The catalogue's full-size counts (torchvision docs; SVHN and UCI pages; notMNIST_small
    as distributed; ImageNet-R README: 30,000 images)."""
    expected = {
        "cifar10": {"train": 50_000, "test": 10_000},
        "cifar100": {"train": 50_000, "test": 10_000},
        "mnist": {"train": 60_000, "test": 10_000},
        "fashionmnist": {"train": 60_000, "test": 10_000},
        "svhn": {"train": 73_257, "test": 26_032},
        "notmnist": {"images": 18_726, "unreadable": 2},
        "imagenet-r": {"images": 30_000},
        "adult": {"train": 32_561, "test": 16_281},
    }
    assert {k: dict(STANDINS[k].counts) for k in expected} == expected
    assert len(IMAGENET_R_WNIDS) == len(set(IMAGENET_R_WNIDS)) == 200


@pytest.mark.parametrize(
    ("key", "classes", "names"),
    [("cifar10", 10, CIFAR10_CLASSES), ("cifar100", 100, CIFAR100_FINE), ("mnist", 10, None)],
)
def test_torchvision_datasets_read_through_the_loaders(
    tmp_path: Path, key: str, classes: int, names: list[str] | None
) -> None:
    write_standin(key, tmp_path, SMALL[key])
    side, channels = (28, None) if key == "mnist" else (32, 3)
    for split in ("train", "test"):
        ds = load_dataset(key, tmp_path, split=split)  # checksums on: stand-in mode
        n = SMALL[key][split]
        assert ds.x.shape == ((n, side, side) if channels is None else (n, side, side, 3))
        assert ds.x.dtype == np.uint8 and _balanced(ds.y, classes)
        assert ds.meta["checksums"] == "stand-in"
        assert ds.meta["data_source"].label == (
            f"rehearsal stand-in (stand-in for {data_source_of(tmp_path, key).stand_in_for})"
        )
        if names is not None:
            assert ds.classes == names


def test_images_and_labels_stay_aligned(tmp_path: Path) -> None:
    """Pixels are class patterns: a nearest-class-mean classifier on the training images
    beats chance (10 %) on the test images by far, which a label/image mix-up would destroy."""
    write_standin("cifar10", tmp_path, {"train": 500, "test": 200})
    tr = load_dataset("cifar10", tmp_path, split="train")
    te = load_dataset("cifar10", tmp_path, split="test")
    x_tr, x_te = tr.as_float_images().reshape(500, -1), te.as_float_images().reshape(200, -1)
    means = np.stack([x_tr[tr.y == c].mean(0) for c in range(10)])
    pred = ((x_te[:, None, :] - means[None]) ** 2).sum(-1).argmin(1)
    assert (pred == te.y).mean() > 0.8


def test_five_datasets_members_read_through_their_loaders(tmp_path: Path) -> None:
    from privrepro.continual.sources import load_five_datasets_member

    for key in ("mnist", "svhn", "notmnist", "fashionmnist", "cifar10"):
        write_standin(key, tmp_path, SMALL[key])
    for member in ("mnist", "svhn", "notmnist", "fashionmnist", "cifar10"):
        tr = load_five_datasets_member(member, tmp_path, "train")
        te = load_five_datasets_member(member, tmp_path, "test")
        assert te.x.shape[1:] == tr.x.shape[1:] and len(te) > 0
        assert tr.x.dtype == np.uint8 and tr.x.shape[1:3] in ((28, 28), (32, 32))
        assert sorted(set(tr.y.tolist())) == list(range(10))
        assert tr.meta["data_source"].is_stand_in
    svhn = load_five_datasets_member("svhn", tmp_path, "train")
    assert len(svhn) == 20 and _balanced(svhn.y, 10)  # the .mat's 10s became 0s
    notmnist = load_five_datasets_member("notmnist", tmp_path, "train")
    assert notmnist.meta["unreadable_skipped"] == 2  # two truncated PNGs, as in the archive
    assert data_source_of(tmp_path, "5-datasets").label == (
        "rehearsal stand-in (stand-in for 5-Datasets)"
    )


def test_imagenet_r_folder_tree(tmp_path: Path) -> None:
    from PIL import Image

    from privrepro.continual.sources import imagenet_r_split

    written = write_standin("imagenet-r", tmp_path, {"images": 400}, jobs=2)
    folder = tmp_path / "imagenet-r"
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == IMAGENET_R_WNIDS
    files = sorted(folder.rglob("*.jpg"))
    assert len(files) == written.files == 400
    with Image.open(files[0]) as im:
        assert im.format == "JPEG" and im.mode == "RGB" and 200 <= min(im.size) <= 600
    counts = [len(list((folder / w).glob("*.jpg"))) for w in IMAGENET_R_WNIDS]
    assert min(counts) >= 2 and sum(counts) == 400
    tr, te = imagenet_r_split(tmp_path, np.random.default_rng(0))
    assert len(tr) + len(te) == 400 and tr.num_classes == 200
    assert tr.meta["data_source"].label == "rehearsal stand-in (stand-in for ImageNet-R)"


def test_files_do_not_depend_on_the_number_of_workers(tmp_path: Path) -> None:
    a = write_standin("notmnist", tmp_path / "a", {"images": 30}, seed=3, jobs=1)
    b = write_standin("notmnist", tmp_path / "b", {"images": 30}, seed=3, jobs=2)
    c = write_standin("notmnist", tmp_path / "c", {"images": 30}, seed=4, jobs=1)
    ma, mb, mc = (read_marker(w.folder)["files"] for w in (a, b, c))  # type: ignore[index]
    assert ma == mb and ma != mc


def test_without_the_marker_the_checksum_fails_as_usual(tmp_path: Path) -> None:
    for key in ("cifar10", "mnist", "svhn", "fashionmnist"):
        write_standin(key, tmp_path, SMALL[key])
    _remove_markers(tmp_path)
    from privrepro.continual.sources import load_fashionmnist, load_svhn

    for load in (
        lambda: load_dataset("cifar10", tmp_path, split="test"),
        lambda: load_dataset("mnist", tmp_path, split="test"),
        lambda: load_svhn(tmp_path, "test"),
        lambda: load_fashionmnist(tmp_path, "test"),
    ):
        with pytest.raises(DamagedDataError, match=r"its MD5 \(\w+\) does not match"):
            load()
    # read unchecked from an unmarked root, they are labelled unverified: never the paper's data
    ds = load_dataset("cifar10", tmp_path, split="test", verify_checksums=False)
    source = ds.meta["data_source"]
    assert source.label == "unverified files in the CIFAR-10 format (stand-in for CIFAR-10)"


def test_a_marker_labels_a_stand_in_but_never_vouches_for_a_pickle(tmp_path: Path) -> None:
    """A stand-in listed by its marker is read as a stand-in, through the restricted
    unpickler: a pickle naming anything but the format's types is refused all the same."""
    import os
    import pickle

    write_standin("cifar10", tmp_path, SMALL["cifar10"])
    folder = tmp_path / "cifar-10-batches-py"
    proof = tmp_path / "PWNED"

    class Planted:
        def __reduce__(self) -> tuple[object, ...]:
            return (os.system, (f"touch {proof}",))

    path = folder / "test_batch"
    path.write_bytes(pickle.dumps({"data": Planted(), "labels": [0]}, protocol=4))
    marker = json.loads((folder / REHEARSAL_MARKER).read_text())
    marker["files"]["test_batch"] = hashlib.md5(path.read_bytes()).hexdigest()  # vouches
    (folder / REHEARSAL_MARKER).write_text(json.dumps(marker))
    assert checksum_status(path, "0" * 32) == "stand-in"  # listed: a stand-in, no more
    with pytest.raises(DamagedDataError, match="posix.system"):
        load_dataset("cifar10", tmp_path, split="test")
    assert not proof.exists()


def test_a_changed_stand_in_file_is_refused(tmp_path: Path) -> None:
    """The marker accepts the stand-in's own MD5 only: a file edited after writing fails."""
    write_standin("cifar10", tmp_path, SMALL["cifar10"])
    path = tmp_path / "cifar-10-batches-py" / "test_batch"
    assert standin_md5(path) == hashlib.md5(path.read_bytes()).hexdigest()
    path.write_bytes(path.read_bytes()[:-1] + b"\x00")
    assert checksum_status(path, "0" * 32) is None
    with pytest.raises(MissingDataError, match="MD5"):
        load_dataset("cifar10", tmp_path, split="test")


def test_stand_in_mode_is_logged_by_every_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each load says so (a sweep's every unit log shows it), the first one also that the
    MD5s came from the manifest (later loads read the decompressed files unchecked)."""
    write_standin("mnist", tmp_path, SMALL["mnist"])
    with caplog.at_level(logging.WARNING, logger="privrepro.data"):
        load_dataset("mnist", tmp_path, split="test")
        load_dataset("mnist", tmp_path, split="test")
    said = [r.getMessage() for r in caplog.records if "rehearsal stand-in mode" in r.getMessage()]
    assert len(said) == 2 and "MD5s its manifest lists" in said[0]


def test_marker_manifests(tmp_path: Path) -> None:
    write_standins(tmp_path, ["adult"])  # full size: 48,842 rows
    write_standin("svhn", tmp_path, SMALL["svhn"])
    root = read_marker(tmp_path)
    assert root is not None and "NOT real data" in root["statement"]
    assert set(root["datasets"]) == {"adult", "svhn"}
    assert root["datasets"]["svhn"]["counts"] == SMALL["svhn"]
    assert root["datasets"]["adult"]["counts"] == {"train": 32_561, "test": 16_281}
    assert set(root["files"]) == {"train_32x32.mat", "test_32x32.mat"}  # SVHN lives at the root
    adult = read_marker(tmp_path / "adult")
    assert adult is not None and set(adult["files"]) == {"adult.data", "adult.test"}
    for rel, md5 in adult["files"].items():
        assert hashlib.md5((tmp_path / "adult" / rel).read_bytes()).hexdigest() == md5


def test_adult_rows_in_the_uci_format(tmp_path: Path) -> None:
    """Full size: 32,561 + 16,281 rows of which 30,162 + 15,060 are complete (UCI page)."""
    from privrepro.data.adult import COLUMNS, adult_age_histogram, load_adult
    from privrepro.rehearsal.standins.adult import CATEGORIES, EDUCATION_NUM

    write_standin("adult", tmp_path)
    data = (tmp_path / "adult" / "adult.data").read_text().split("\n")
    test = (tmp_path / "adult" / "adult.test").read_text().split("\n")
    assert test[0] == "|1x3 Cross validator" and data[-2:] == ["", ""]
    assert len(data) - 2 == 32_561 and len(test) - 3 == 16_281
    assert test[1].endswith("K.") and not data[0].endswith(".")
    assert len(load_adult(tmp_path, "train")) == 30_162
    frame = load_adult(tmp_path, "all")
    assert len(frame) == 45_222 and list(frame.columns) == COLUMNS
    assert frame["age"].between(17, 90).all()
    assert (frame["education"].map(EDUCATION_NUM) == frame["education-num"]).all()
    assert set(frame["workclass"]) <= set(CATEGORIES["workclass"])
    assert adult_age_histogram(frame).sum() == 45_222
    assert frame.attrs["data_source"].label == "rehearsal stand-in (stand-in for UCI Adult)"
    assert data_source_of(tmp_path, "adult").label == "rehearsal stand-in (stand-in for UCI Adult)"


def test_refuses_a_folder_that_may_hold_real_data(tmp_path: Path) -> None:
    (tmp_path / "cifar-10-batches-py").mkdir()
    with pytest.raises(ConfigError, match="holds files but no PRIVREPRO_REHEARSAL_STAND_IN"):
        write_standin("cifar10", tmp_path, SMALL["cifar10"])
    with pytest.raises(ConfigError, match="standins"):
        write_standins(tmp_path / "new", ["cifar-11"])
    with pytest.raises(ConfigError, match="counts.images"):
        write_standin("imagenet-r", tmp_path / "new", {"images": 199})


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from privrepro.rehearsal.standins.__main__ import main

    assert main(["--root", str(tmp_path / "r"), "--only", "adult", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "adult" in out and "stand-in for UCI Adult" in out and "total" in out
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "adult").mkdir()
    assert main(["--root", str(tmp_path / "real"), "--only", "adult"]) == 2
    assert "configuration error: root" in capsys.readouterr().err
    assert main(["--root", str(tmp_path / "r"), "--only", "nope"]) == 2


@pytest.mark.slow
def test_full_size_mnist(tmp_path: Path) -> None:
    """MNIST at its real size, read through the loader (60,000 + 10,000, 28×28)."""
    write_standin("mnist", tmp_path)
    train = load_dataset("mnist", tmp_path, split="train")
    test = load_dataset("mnist", tmp_path, split="test")
    assert train.x.shape == (60_000, 28, 28) and test.x.shape == (10_000, 28, 28)
    assert _balanced(train.y, 10) and train.meta["data_source"].is_stand_in


def test_rewriting_an_image_folder_drops_the_old_images(tmp_path: Path) -> None:
    write_standin("notmnist", tmp_path, {"images": 40})
    write_standin("notmnist", tmp_path, {"images": 20, "unreadable": 0})
    assert len(list((tmp_path / "notMNIST_small").rglob("*.png"))) == 20
    manifest = read_marker(tmp_path / "notMNIST_small")
    assert manifest is not None and len(manifest["files"]) == 20


def test_labels_of_any_folder(tmp_path: Path) -> None:
    from privrepro.data.provenance import folder_source

    (tmp_path / "mine").mkdir()
    assert folder_source(tmp_path / "mine", "my-images").label == "my-images"
    assert folder_source(tmp_path / "mine", "imagenet-r").label == "ImageNet-R"
    (tmp_path / REHEARSAL_MARKER).write_text("")  # an empty marker still marks
    assert read_marker(tmp_path) == {}
    assert folder_source(tmp_path / "mine", "my-images").label == (
        "rehearsal stand-in (stand-in for my-images)"
    )
    with pytest.raises(ValueError, match="must be one of"):
        data_source_of(tmp_path, "imagenet-21k")
