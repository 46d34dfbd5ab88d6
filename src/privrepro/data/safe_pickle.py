"""Restricted unpickling of dataset files: nothing in a data folder can run code.

The CIFAR releases ("python version") are pickled dicts of strings, bytes, numbers, lists and
numpy arrays. Python's :mod:`pickle` can rebuild any importable object and call it while it
loads, so a planted file would run whatever it names. :func:`load_data_pickle` admits only what
that format holds: the builtin containers and scalars (which pickle rebuilds without looking up
any name) and the few numpy functions that rebuild an array, a dtype or a scalar from plain data.
Any other name in the file — ``os.system``, ``builtins.eval``, a class of the project itself —
refuses the file before anything is called, whatever its checksum or any marker beside it says.
"""

from __future__ import annotations

import codecs
import io
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "ADMITTED",
    "DataPickleError",
    "RestrictedUnpickler",
    "load_data_pickle",
    "loads_data_pickle",
]


class DataPickleError(pickle.UnpicklingError):
    """A pickle that names something a dataset file cannot hold, or that does not load."""


def _reconstruct(cls: Any, shape: Any, dtype: Any) -> Any:
    """numpy's ``_reconstruct``, for plain arrays only (never a subclass named by the file)."""
    if cls is not np.ndarray:
        raise DataPickleError(f"an array of class {cls!r}: only numpy.ndarray is admitted")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


def _dtype(*args: Any) -> np.dtype[Any]:
    """A numpy dtype from its pickled name (``'u1'``, ``'i8'``), as a fresh copy (pickle then
    sets its state: never on numpy's shared instance); no object dtypes."""
    if not args or not isinstance(args[0], str) or not all(isinstance(a, bool) for a in args[1:]):
        raise DataPickleError(f"a dtype built from {args!r}: only dtype names are admitted")
    dt = np.dtype(args[0], False, True)
    if dt.hasobject:
        raise DataPickleError("an array of Python objects: only numeric arrays are admitted")
    return dt


def _scalar(dtype: Any, data: Any = None) -> Any:
    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(data, bytes):
        raise DataPickleError("a numpy scalar that is not numeric")
    return np.frombuffer(data, dtype=dtype, count=1)[0]


def _frombuffer(buf: Any, dtype: Any, shape: Any, order: str) -> Any:
    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise DataPickleError("an array of Python objects: only numeric arrays are admitted")
    arr = np.frombuffer(buf, dtype=dtype)
    return arr.reshape(shape, order="F" if order == "F" else "C")


def _latin1(text: Any, encoding: str = "latin1") -> bytes:
    """``_codecs.encode`` as pickle protocol 2 uses it for bytes: latin-1 only."""
    if not isinstance(text, str) or codecs.lookup(encoding).name != "iso8859-1":
        raise DataPickleError(f"_codecs.encode with {encoding!r}: only latin-1 is admitted")
    return text.encode("latin1")


#: Every global a dataset pickle may name, and what it is rebuilt with.
ADMITTED: dict[tuple[str, str], Callable[..., Any] | type] = {
    **{
        (m, "_reconstruct"): _reconstruct
        for m in ("numpy.core.multiarray", "numpy._core.multiarray")
    },
    **{(m, "scalar"): _scalar for m in ("numpy.core.multiarray", "numpy._core.multiarray")},
    **{(m, "_frombuffer"): _frombuffer for m in ("numpy.core.numeric", "numpy._core.numeric")},
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): _dtype,
    ("_codecs", "encode"): _latin1,
}


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the names of :data:`ADMITTED`."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return ADMITTED[(module, name)]
        except KeyError:
            raise DataPickleError(
                f"it names {module}.{name}, which a dataset file cannot hold "
                "(only containers, strings, bytes, numbers and numpy arrays are admitted)"
            ) from None

    def persistent_load(self, pid: Any) -> Any:
        raise DataPickleError("it holds a persistent reference, which a dataset file cannot hold")


def loads_data_pickle(data: bytes) -> Any:
    """Unpickle ``data`` (Python 2 strings read as latin-1, as torchvision does) with
    :class:`RestrictedUnpickler`.

    Raises:
        DataPickleError: the file names anything else, or does not load.
    """
    try:
        return RestrictedUnpickler(io.BytesIO(data), encoding="latin1").load()
    except DataPickleError:
        raise
    except Exception as exc:  # truncated or garbled: whatever pickle raised
        raise DataPickleError(
            f"it does not load as a pickle ({type(exc).__name__}: {exc})"
        ) from exc


def load_data_pickle(path: str | Path) -> Any:
    """The object pickled in the dataset file ``path``, through :class:`RestrictedUnpickler`.

    Raises:
        DataPickleError: the file names anything but the admitted types, or does not load.
    """
    return loads_data_pickle(Path(path).read_bytes())
