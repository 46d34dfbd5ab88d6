"""DataSource labels: what a stand-in is called, and the one place the rehearsal marker acts."""

from __future__ import annotations

import json
from pathlib import Path

from privrepro.continual.provenance import benchmark_source
from privrepro.data.provenance import (
    ANALYTIC,
    REHEARSAL_MARKER,
    UNDECLARED,
    DataSource,
    is_stand_in_label,
    read_from,
    registry_source,
)


def test_labels_name_the_stand_in_and_how_it_was_shaped() -> None:
    assert DataSource("CIFAR-10").label == "CIFAR-10"
    digits = DataSource("digits", stand_in_for="CIFAR-10")
    assert digits.is_stand_in and digits.label == "digits (stand-in for CIFAR-10)"
    shaped = DataSource("features", stand_in_for="X", shaped="shaped to land near 79 %")
    assert shaped.label == "features (stand-in for X; shaped to land near 79 %)"
    assert is_stand_in_label(digits.label) and is_stand_in_label(shaped.label)
    for real in (DataSource("CIFAR-10").label, ANALYTIC.label, UNDECLARED.label, None, 3.0):
        assert not is_stand_in_label(real)


def test_read_from_turns_a_rehearsal_root_into_a_stand_in(tmp_path: Path) -> None:
    assert read_from("cifar10", tmp_path) == DataSource("CIFAR-10", fingerprint="CIFAR-10 release")
    assert read_from("cifar10", None) == DataSource("CIFAR-10")
    (tmp_path / REHEARSAL_MARKER).write_text("")
    nested = tmp_path / "cifar10" / "raw"
    nested.mkdir(parents=True)
    for root in (tmp_path, nested):  # the marker at the root covers every folder below it
        source = read_from("cifar10", root)
        assert source.is_stand_in and source.stand_in_for == "CIFAR-10"


def test_registry_source_names_embedded_and_substituted_data(tmp_path: Path) -> None:
    digits = registry_source("digits", tmp_path, "CIFAR-10")
    assert digits.is_stand_in and digits.stand_in_for == "CIFAR-10"
    assert "digits" in digits.name
    # the paper's own dataset, read from a plain data root, is the real thing
    assert registry_source("mnist", tmp_path, "MNIST").label == "MNIST"
    # another real dataset in the paper's place is a stand-in for it
    assert registry_source("cifar100", tmp_path, "CIFAR-10").stand_in_for == "CIFAR-10"
    (tmp_path / REHEARSAL_MARKER).write_text("")
    assert registry_source("mnist", tmp_path, "MNIST").is_stand_in


def test_cl_benchmark_sources(tmp_path: Path) -> None:
    real = benchmark_source("cifar100", "backbone", tmp_path)
    assert real == DataSource("Split-CIFAR-100", fingerprint="CIFAR-100 release")
    unverified = benchmark_source("cifar100", "backbone", tmp_path, verified=False)
    assert unverified.is_stand_in and unverified.label.startswith("unverified files")
    synthetic = benchmark_source("cifar100", "synthetic", tmp_path)
    assert synthetic.is_stand_in and "by construction" in synthetic.label
    images = benchmark_source("imagenet-r", "synthetic", tmp_path, images=True)
    assert images.is_stand_in and images.shaped is None and "ViT" in images.label
    (tmp_path / REHEARSAL_MARKER).write_text("")
    rehearsal = benchmark_source("5-datasets", "backbone", tmp_path)
    assert rehearsal.is_stand_in and rehearsal.stand_in_for == "5-Datasets"


def test_the_fingerprint_says_which_files_a_unit_reads(tmp_path: Path) -> None:
    """Part of a unit's identity: the release for a dataset whose files are all checked against
    the release's checksums (any copy that loads is the same data); a hash of the files where no
    checksum is published (UCI Adult), of a stand-in marker's listing, of an image folder's
    names and sizes; none for data that does not come from a data root."""
    a, b = tmp_path / "a", tmp_path / "b"
    for root, age in ((a, "39"), (b, "40")):
        (root / "adult").mkdir(parents=True)
        (root / "adult" / "adult.data").write_text(
            f"{age}, Private, 1, x, 1, y, z, w, v, u, 0, 0, 1, c, >50K\n"
        )
        (root / "adult" / "adult.test").write_text("")
    fa, fb = read_from("adult", a).fingerprint, read_from("adult", b).fingerprint
    assert fa and fb and fa != fb  # one age changed: other data, other units
    assert read_from("adult", a).fingerprint == fa  # stable
    # checksummed datasets: every copy that loads is the release
    assert read_from("mnist", a).fingerprint == read_from("mnist", b).fingerprint == "MNIST release"
    # marked: the listing the loader checks every file against
    for root, md5 in ((a, "0" * 32), (b, "1" * 32)):
        (root / "MNIST" / "raw").mkdir(parents=True)
        listing = {"files": {"t10k-images-idx3-ubyte.gz": md5}}
        (root / "MNIST" / "raw" / REHEARSAL_MARKER).write_text(json.dumps(listing))
    ma, mb = read_from("mnist", a), read_from("mnist", b)
    assert ma.is_stand_in and ma.fingerprint != mb.fingerprint  # a marker in raw/ marks too
    # image folders: names and sizes
    for root, size in ((a, 3), (b, 4)):
        (root / "imagenet-r" / "n01").mkdir(parents=True)
        (root / "imagenet-r" / "n01" / "x.jpg").write_bytes(b"x" * size)
    ia, ib = (benchmark_source("imagenet-r", "backbone", r).fingerprint for r in (a, b))
    assert ia and ia != ib
    # nothing read from a data root: no fingerprint
    assert registry_source("digits", a, "CIFAR-10").fingerprint is None
    assert benchmark_source("cifar100", "synthetic", a).fingerprint is None
