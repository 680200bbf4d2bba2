"""ctypes binding of libfdl (include/fdl.h): repositories, versions, and the
SQL that opens a version in stock DuckDB. Every call goes through the C
library; nothing here reads the repository's files itself."""
import ctypes
import ctypes.util
import json
import os
import subprocess

__all__ = ["Error", "Repository", "Version", "library_version"]

ID_LEN = 36


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 2048)]


class Error(Exception):
    """A libfdl error: `code` is the CLI's exit code (3 not found, 4 conflict,
    5 invalid, 6 I/O, 7 expired, 11 ambiguous, ...), the message says what."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _find_library():
    path = os.environ.get("FDL_LIBRARY")
    if path:
        return path
    try:
        return ctypes.CDLL("libfdl.so.0")._name
    except OSError:
        pass
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "fdl"], capture_output=True, text=True,
                                check=True).stdout.strip()
        return os.path.join(libdir, "libfdl.so.0")
    except (OSError, subprocess.CalledProcessError):
        pass
    found = ctypes.util.find_library("fdl")
    if not found:
        raise OSError("libfdl not found: set FDL_LIBRARY, or install it (make install) where the loader finds it")
    return found


_lib = ctypes.CDLL(_find_library())
_p = ctypes.c_void_p
_s = ctypes.c_char_p
_e = ctypes.POINTER(_Error)


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_libversion = _fn("fdl_libversion", _s)
_free = _fn("fdl_free", None, _p)
_repo_open = _fn("fdl_repo_open", ctypes.c_int, ctypes.POINTER(_p), _s, _e)
_repo_free = _fn("fdl_repo_free", None, _p)
_repo_root = _fn("fdl_repo_root", _s, _p)
_repo_data_url = _fn("fdl_repo_data_url", _s, _p)
_ref_resolve = _fn("fdl_ref_resolve", ctypes.c_int, ctypes.c_char * (ID_LEN + 1), _p, _s, _e)
_version_read = _fn("fdl_version_read", ctypes.c_int, ctypes.POINTER(_p), _p, _s, _e)
_version_free = _fn("fdl_version_free", None, _p)
_version_to_json = _fn("fdl_version_to_json", ctypes.c_int, ctypes.POINTER(_p), _p, _e)
_version_dataset = _fn("fdl_version_dataset", ctypes.c_int, ctypes.POINTER(_p), _p, _p, _e)


class _Log(ctypes.Structure):
    _fields_ = [("items", ctypes.POINTER(_p)), ("count", ctypes.c_size_t), ("from_index", ctypes.c_size_t),
                ("files_read", ctypes.c_size_t)]


_log_read = _fn("fdl_log_read", ctypes.c_int, ctypes.POINTER(ctypes.POINTER(_Log)), _p, _s, ctypes.c_longlong, _e)
_log_free = _fn("fdl_log_free", None, ctypes.POINTER(_Log))
_reader_open_ref = _fn("fdl_reader_open_ref", ctypes.c_int, ctypes.POINTER(_p), _s, _s, _e)
_reader_free = _fn("fdl_reader_free", None, _p)
_reader_attach_sql = _fn("fdl_reader_attach_sql", ctypes.c_int, ctypes.POINTER(_p), _p, _s, _e)


def library_version():
    """The version of the libfdl that is loaded, e.g. "0.2.0"."""
    return _libversion().decode()


def _check(rc, err):
    if rc:
        raise Error(-rc if rc < 0 else 1, err.message.decode(errors="replace"))


def _text(ptr):
    """A string libfdl allocated, copied and freed."""
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        _free(ptr)


class Version:
    """One version: its version.json, as the library checked and read it."""

    def __init__(self, doc):
        self.json = doc
        self.id = doc["id"]
        self.seq = doc["seq"]
        self.parents = doc["parents"]
        self.created_at = doc["created_at"]
        self.author = doc["author"]["name"]
        self.message = doc["message"]
        self.changes = doc.get("changes", [])

    def __repr__(self):
        return f"Version(seq={self.seq}, id={self.id!r}, message={self.message!r})"


class Repository:
    """A repository at a folder, file://, http(s):// or s3:// root. Like the
    C handle it wraps, use it from one thread at a time."""

    def __init__(self, root):
        self._h = _p()
        err = _Error()
        _check(_repo_open(ctypes.byref(self._h), root.encode(), ctypes.byref(err)), err)

    def close(self):
        if self._h:
            _repo_free(self._h)
            self._h = _p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    @property
    def root(self):
        return _repo_root(self._h).decode()

    @property
    def data_url(self):
        return _repo_data_url(self._h).decode()

    def resolve(self, ref=None):
        """The version id a ref names (branch, tag, HEAD, id, prefix, seq, branch:seq)."""
        out = (ctypes.c_char * (ID_LEN + 1))()
        err = _Error()
        _check(_ref_resolve(out, self._h, ref.encode() if ref else None, ctypes.byref(err)), err)
        return out.value.decode()

    def _read(self, vid):
        v, err = _p(), _Error()
        _check(_version_read(ctypes.byref(v), self._h, vid.encode(), ctypes.byref(err)), err)
        return v

    def version(self, ref=None):
        v = self._read(self.resolve(ref))
        try:
            text, err = _p(), _Error()
            _check(_version_to_json(ctypes.byref(text), v, ctypes.byref(err)), err)
            return Version(json.loads(_text(text)))
        finally:
            _version_free(v)

    def versions(self, ref=None, limit=None):
        """The history of a ref, newest first, following first parents (through
        the repository's history index where it has one: a few requests)."""
        log, err = ctypes.POINTER(_Log)(), _Error()
        rc = _log_read(ctypes.byref(log), self._h, ref.encode() if ref else None,
                       -1 if limit is None else int(limit), ctypes.byref(err))
        try:
            _check(rc, err)
            out = []
            for i in range(log.contents.count):
                text = _p()
                _check(_version_to_json(ctypes.byref(text), log.contents.items[i], ctypes.byref(err)), err)
                out.append(Version(json.loads(_text(text))))
            return out
        finally:
            _log_free(log)

    def dataset(self, ref=None):
        """The dataset.json a version was published with (checked), as a dict."""
        v = self._read(self.resolve(ref))
        try:
            text, err = _p(), _Error()
            _check(_version_dataset(ctypes.byref(text), self._h, v, ctypes.byref(err)), err)
            return json.loads(_text(text))
        finally:
            _version_free(v)

    def attach_sql(self, ref=None, alias="lake"):
        """The SQL that opens a version read-only in stock DuckDB (the catalog
        checked against its sha256 first)."""
        r, err = _p(), _Error()
        _check(_reader_open_ref(ctypes.byref(r), self.root.encode(), ref.encode() if ref else None,
                                ctypes.byref(err)), err)
        try:
            sql = _p()
            _check(_reader_attach_sql(ctypes.byref(sql), r, alias.encode(), ctypes.byref(err)), err)
            return _text(sql)
        finally:
            _reader_free(r)
