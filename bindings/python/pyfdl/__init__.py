"""pyfdl: the Python binding of libfdl (include/fdl.h), through ctypes.

Open a repository (a folder, http(s)://, s3://), list its versions, read a
version's description, open a version in stock DuckDB, check out a working
catalog and commit it. Every call goes through the C library; nothing here
reads the repository's files itself.

The import name is `pyfdl`, not `fdl`: the format author's earlier Python
CLI, frozen-ducklake, installs a top-level module named `fdl`, and both may
live in one environment (as pygit2 binds libgit2)."""
from __future__ import annotations

import ctypes
import ctypes.util
import datetime as _dt
import json
import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Union

if TYPE_CHECKING:  # pragma: no cover
    import duckdb

__all__ = [
    "Author", "ConflictError", "Error", "ExpiredError", "InvalidError", "NotFoundError", "Repository",
    "StorageError", "Version", "checkout", "commit", "extension_dir", "library_version",
]
__version__ = "2.0.0"
# The libfdl this binding is written against: its soname (the major version,
# which changes whenever a struct below changes layout) and the version of
# each options struct it fills (include/fdl.h, FDL_*_OPTIONS_VERSION).
_SONAME = "libfdl.so.2"
_MAJOR = 2
_COMMIT_OPTIONS_VERSION = 1
_CHECKOUT_OPTIONS_VERSION = 1

ID_LEN = 36
PathLike = Union[str, "os.PathLike[str]"]


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 2048)]


class Error(Exception):
    """A libfdl error. `code` is the CLI's exit code for it (3 not found,
    4 conflict, 5 invalid, 6 I/O, 7 expired, 8 nothing to commit, 9 exists,
    10 DuckDB, 11 ambiguous, 12 out of memory); the message says what
    happened. The families scripts branch on have their own subclasses."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class NotFoundError(Error, LookupError):
    """3: a repository, file, ref or version does not exist."""


class ConflictError(Error):
    """4: another writer published first (the ref moved); nothing was lost."""


class InvalidError(Error, ValueError):
    """5 (and 11, an ambiguous id): bad input, or a file that breaks the format."""


class StorageError(Error, OSError):
    """6: the store or the file system failed."""


class ExpiredError(Error):
    """7: the version left retention or was withdrawn."""


_FAMILIES = {3: NotFoundError, 4: ConflictError, 5: InvalidError, 6: StorageError, 7: ExpiredError,
             11: InvalidError}


def _beside_cli() -> Optional[str]:
    """libfdl.so.MAJOR in the lib folder next to the fdl CLI's bin folder (an
    installed prefix: $(prefix)/bin/fdl and $(prefix)/lib/libfdl.so.2)."""
    cli = shutil.which("fdl")
    if not cli:
        return None
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(cli))), "lib", _SONAME)
    return lib if os.path.exists(lib) else None


def _own() -> Optional[str]:
    """The libfdl a wheel of pyfdl carries (pyfdl/lib/libfdl.so.MAJOR, with
    its DuckDB, extensions and C libraries in pyfdl/lib/fdl/)."""
    lib = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", _SONAME)
    return lib if os.path.exists(lib) else None


def _find_library() -> str:
    path = os.environ.get("FDL_LIBRARY") or _own()
    if path:
        return path
    beside = _beside_cli()
    if beside:
        return beside
    try:
        return ctypes.CDLL(_SONAME)._name
    except OSError:
        pass
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "fdl"], capture_output=True, text=True,
                                check=True).stdout.strip()
        if os.path.exists(os.path.join(libdir, _SONAME)):
            return os.path.join(libdir, _SONAME)
    except (OSError, subprocess.CalledProcessError):
        pass
    found = ctypes.util.find_library("fdl")
    if not found:
        raise OSError(f"libfdl not found: set FDL_LIBRARY to {_SONAME}, or install fdl (make install) so that "
                      "its lib folder is beside the fdl command on PATH")
    return found


def _load() -> ctypes.CDLL:
    """The library, refused when its major version is not the one this
    binding's structs are laid out for (an FDL_LIBRARY or a loader's find
    of another major would read the options at the wrong offsets)."""
    lib = ctypes.CDLL(_find_library())
    get = lib.fdl_libversion
    get.restype = ctypes.c_char_p
    found = get().decode()
    if found.split(".")[0] != str(_MAJOR):
        raise OSError(f"{lib._name} is libfdl {found}; pyfdl {__version__} needs libfdl {_MAJOR}.x ({_SONAME})")
    return lib


_lib = _load()
_p = ctypes.c_void_p
_s = ctypes.c_char_p
_e = ctypes.POINTER(_Error)


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


class _CommitOptions(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("message", _s), ("author_name", _s), ("author_email", _s), ("inputs", ctypes.POINTER(_s)),
                ("input_count", ctypes.c_size_t), ("progress", _p), ("progress_payload", _p),
                ("compact", ctypes.c_int), ("warning", _p), ("warning_payload", _p)]


class _CheckoutOptions(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("ref", _s), ("create", ctypes.c_int), ("start", _s)]


class _Log(ctypes.Structure):
    _fields_ = [("items", ctypes.POINTER(_p)), ("count", ctypes.c_size_t), ("from_index", ctypes.c_size_t),
                ("files_read", ctypes.c_size_t)]


_libversion = _fn("fdl_libversion", _s)
_extension_dir = _fn("fdl_extension_dir", _p)
_free = _fn("fdl_free", None, _p)
_repo_open_token = _fn("fdl_repo_open_token", ctypes.c_int, ctypes.POINTER(_p), _s, _s, _e)
_repo_free = _fn("fdl_repo_free", None, _p)
_repo_root = _fn("fdl_repo_root", _s, _p)
_repo_data_url = _fn("fdl_repo_data_url", _s, _p)
_ref_resolve = _fn("fdl_ref_resolve", ctypes.c_int, ctypes.c_char * (ID_LEN + 1), _p, _s, _e)
_version_read = _fn("fdl_version_read", ctypes.c_int, ctypes.POINTER(_p), _p, _s, _e)
_version_free = _fn("fdl_version_free", None, _p)
_version_to_json = _fn("fdl_version_to_json", ctypes.c_int, ctypes.POINTER(_p), _p, _e)
_version_dataset = _fn("fdl_version_dataset", ctypes.c_int, ctypes.POINTER(_p), _p, _p, _e)
_log_read = _fn("fdl_log_read", ctypes.c_int, ctypes.POINTER(ctypes.POINTER(_Log)), _p, _s, ctypes.c_longlong, _e)
_log_free = _fn("fdl_log_free", None, ctypes.POINTER(_Log))
_reader_open_token = _fn("fdl_reader_open_token", ctypes.c_int, ctypes.POINTER(_p), _s, _s, _s, _e)
_reader_free = _fn("fdl_reader_free", None, _p)
_reader_attach_sql_token = _fn("fdl_reader_attach_sql_token", ctypes.c_int, ctypes.POINTER(_p), _p, _s, ctypes.c_int,
                               _e)
_checkout = _fn("fdl_checkout", ctypes.c_int, _p, _s, ctypes.POINTER(_CheckoutOptions), _e)
_work_attach_sql = _fn("fdl_work_attach_sql", ctypes.c_int, ctypes.POINTER(_p), _s, _s, _e)
_commit = _fn("fdl_commit", ctypes.c_int, ctypes.c_char * (ID_LEN + 1), _s, ctypes.POINTER(_CommitOptions), _e)


def library_version() -> str:
    """The version of the libfdl that is loaded, e.g. "2.0.0"."""
    return _libversion().decode()


def extension_dir() -> str:
    """The folder libfdl loads DuckDB's extensions from, laid out as DuckDB's
    `extension_directory`: give it to DuckDB to load them offline."""
    return _text(_extension_dir())


def _check(rc: int, err: _Error) -> None:
    if rc:
        code = -rc if rc < 0 else 1
        raise _FAMILIES.get(code, Error)(code, err.message.decode(errors="replace"))


def _text(ptr: Any) -> str:
    """A string libfdl allocated, copied and freed."""
    if not ptr:
        raise MemoryError("libfdl returned no string (out of memory)")
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        _free(ptr)


def _path(p: Optional[PathLike]) -> Optional[bytes]:
    return None if p is None else os.fsencode(os.fspath(p))


class Author(NamedTuple):
    """Who made a version; str() gives "Name <email>" as Git shows it."""

    name: str
    email: Optional[str] = None

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>" if self.email else self.name


class Version:
    """One version: its version.json, as the library checked and read it."""

    json: Dict[str, Any]
    id: str
    seq: int
    parents: List[str]
    created_at: _dt.datetime
    author: Author
    message: str
    changes: List[Dict[str, Any]]

    def __init__(self, doc: Dict[str, Any]):
        self.json = doc
        self.id = doc["id"]
        self.seq = doc["seq"]
        self.parents = doc["parents"]
        self.created_at = _dt.datetime.strptime(doc["created_at"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=_dt.timezone.utc)
        self.author = Author(doc["author"]["name"], doc["author"].get("email"))
        self.message = doc["message"]
        self.changes = doc.get("changes", [])

    def __repr__(self) -> str:
        return f"Version(seq={self.seq}, id={self.id!r}, message={self.message!r})"


class Repository:
    """A repository at a folder, file://, http(s):// or s3:// root. Like the
    C handle it wraps, use it from one thread at a time. `token`: what a
    private http(s):// host wants (sent to that host only); without it, libfdl
    looks in FDL_TOKEN, the credentials file and ~/.netrc."""

    def __init__(self, root: PathLike, token: Optional[str] = None):
        self._h = _p()
        self._token = token.encode() if token else None
        err = _Error()
        _check(_repo_open_token(ctypes.byref(self._h), _path(root), self._token, ctypes.byref(err)), err)

    def __repr__(self) -> str:
        return f"Repository({self.root!r})"  # never the token

    def close(self) -> None:
        if self._h:
            _repo_free(self._h)
            self._h = _p()

    def __enter__(self) -> "Repository":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    @property
    def root(self) -> str:
        return _repo_root(self._h).decode()

    @property
    def data_url(self) -> str:
        return _repo_data_url(self._h).decode()

    def resolve(self, ref: Optional[str] = None) -> str:
        """The version id a ref names (branch, tag, HEAD, id, prefix, seq, branch:seq)."""
        out = (ctypes.c_char * (ID_LEN + 1))()
        err = _Error()
        _check(_ref_resolve(out, self._h, ref.encode() if ref else None, ctypes.byref(err)), err)
        return out.value.decode()

    def _read(self, vid: str) -> Any:
        v, err = _p(), _Error()
        _check(_version_read(ctypes.byref(v), self._h, vid.encode(), ctypes.byref(err)), err)
        return v

    def version(self, ref: Optional[str] = None) -> Version:
        v = self._read(self.resolve(ref))
        try:
            text, err = _p(), _Error()
            _check(_version_to_json(ctypes.byref(text), v, ctypes.byref(err)), err)
            return Version(json.loads(_text(text)))
        finally:
            _version_free(v)

    def versions(self, ref: Optional[str] = None, limit: Optional[int] = None) -> List[Version]:
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

    def dataset(self, ref: Optional[str] = None) -> Dict[str, Any]:
        """The dataset.json a version was published with (checked), as a dict."""
        v = self._read(self.resolve(ref))
        try:
            text, err = _p(), _Error()
            _check(_version_dataset(ctypes.byref(text), self._h, v, ctypes.byref(err)), err)
            return json.loads(_text(text))
        finally:
            _version_free(v)

    def attach_sql(self, ref: Optional[str] = None, alias: str = "lake", show_token: bool = False) -> str:
        """The SQL that opens a version read-only in stock DuckDB (the catalog
        checked against its sha256 first). For a private host it first creates
        DuckDB's http secret: BEARER_TOKEN getenv('FDL_TOKEN') (DuckDB's
        command line), or the token itself with show_token."""
        r, err = _p(), _Error()
        _check(_reader_open_token(ctypes.byref(r), self.root.encode(), ref.encode() if ref else None, self._token,
                                  ctypes.byref(err)), err)
        try:
            sql = _p()
            _check(_reader_attach_sql_token(ctypes.byref(sql), r, alias.encode(), int(show_token),
                                            ctypes.byref(err)), err)
            return _text(sql)
        finally:
            _reader_free(r)

    def connect(self, ref: Optional[str] = None, alias: str = "lake") -> "duckdb.DuckDBPyConnection":
        """A new in-memory DuckDB connection with the version attached
        read-only as `alias` (and made the default catalog), its extensions
        loaded from libfdl's folder, offline; a private host's token set as
        the connection's http secret. Needs the `duckdb` package."""
        import duckdb

        con = duckdb.connect(config={"extension_directory": extension_dir(), "autoinstall_known_extensions": False})
        try:
            con.execute(self.attach_sql(ref, alias, show_token=True))
            con.execute(f"USE {alias}")
        except BaseException:
            con.close()
            raise
        return con

    def checkout(self, work: PathLike, ref: Optional[str] = None) -> str:
        """Make the working catalog folder `work` (it must not exist or be
        empty) from a branch's tip; returns the SQL that attaches it for
        writing (catalog alias `lake`), to run in DuckDB."""
        err = _Error()
        opts = _CheckoutOptions(_CHECKOUT_OPTIONS_VERSION, ref.encode() if ref else None)
        _check(_checkout(self._h, _path(work), ctypes.byref(opts), ctypes.byref(err)), err)
        sql = _p()
        _check(_work_attach_sql(ctypes.byref(sql), _path(work), b"lake", ctypes.byref(err)), err)
        return _text(sql)

    def commit(self, work: PathLike, message: str, author: Union[str, Author, None] = None,
               inputs: Sequence[str] = ()) -> str:
        """Publish what `work` (a working catalog of this repository) holds
        as a new version; returns its id. `author` is "Name <email>", an
        Author, or None for the defaults `fdl commit` uses."""
        return commit(work, message, author, inputs)


def _author(author: Union[str, Author, None]) -> Author:
    if isinstance(author, Author):
        return author
    if author:
        name, sep, rest = author.partition("<")
        return Author(name.strip(), rest.rstrip(">").strip() if sep else None)
    name = os.environ.get("FDL_AUTHOR_NAME") or os.environ.get("GIT_AUTHOR_NAME")
    email = os.environ.get("FDL_AUTHOR_EMAIL") or os.environ.get("GIT_AUTHOR_EMAIL")
    if not name:
        raise InvalidError(5, "a commit needs an author: pass author=\"Name <email>\" or set FDL_AUTHOR_NAME")
    return Author(name, email)


def checkout(root: PathLike, work: PathLike, ref: Optional[str] = None) -> str:
    """Repository(root).checkout(work, ref), closing the repository."""
    with Repository(root) as repo:
        return repo.checkout(work, ref)


def commit(work: PathLike, message: str, author: Union[str, Author, None] = None,
           inputs: Sequence[str] = ()) -> str:
    """Publish the working catalog `work` as a new version (fdl commit);
    returns its id. Raises ConflictError when someone else published first,
    Error with code 8 when there is nothing to commit."""
    who = _author(author)
    items = (_s * (len(inputs) + 1))(*[i.encode() for i in inputs], None)
    opts = _CommitOptions(_COMMIT_OPTIONS_VERSION, message.encode(), who.name.encode(), who.email.encode() if who.email else None,
                          items, len(inputs), None, None, 0, None, None)
    out, err = (ctypes.c_char * (ID_LEN + 1))(), _Error()
    _check(_commit(out, _path(work), ctypes.byref(opts), ctypes.byref(err)), err)
    return out.value.decode()
