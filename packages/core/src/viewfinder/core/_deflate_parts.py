"""Joining separately compressed raw deflate streams into one.

A deflate stream is a run of blocks, the last of which carries a "final" bit. libdeflate
compresses a whole buffer at a time and always ends with a final block, so its outputs
for consecutive parts of some data cannot simply be concatenated. :func:`make_continuable`
fixes that for every part but the last: it finds where the part's final block starts,
clears that block's final bit, and ends the part on a byte boundary with an empty stored
block (what zlib's sync flush writes). The parts then concatenate into one valid stream.

Finding the final block takes an inflate pass over the part with zlib's ``Z_BLOCK``
flush, which stops at every block boundary and reports the bit position there (the
technique of zlib's ``examples/gzappend.c``). Python's :mod:`zlib` does not expose
``Z_BLOCK``, so this module calls the zlib library through :mod:`ctypes`;
:func:`available` says whether it could be loaded.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

_Z_OK = 0
_Z_BLOCK = 5
_Z_BUF_ERROR = -5
_AT_BLOCK_END = 128  # z_stream.data_type flags on return from inflate(Z_BLOCK)
_IN_LAST_BLOCK = 64
_UNUSED_BITS = 7
_SCRATCH = 1 << 20  # inflated bytes are thrown away; zlib keeps its own window
_EMPTY_STORED_BLOCK_LENGTHS = b"\x00\x00\xff\xff"  # LEN 0, NLEN ~0


class _ZStream(ctypes.Structure):
    """zlib's ``z_stream`` (the same layout in every zlib 1.x and zlib-ng's zlib API)."""

    _fields_ = [
        ("next_in", ctypes.c_void_p),
        ("avail_in", ctypes.c_uint),
        ("total_in", ctypes.c_ulong),
        ("next_out", ctypes.c_void_p),
        ("avail_out", ctypes.c_uint),
        ("total_out", ctypes.c_ulong),
        ("msg", ctypes.c_char_p),
        ("state", ctypes.c_void_p),
        ("zalloc", ctypes.c_void_p),
        ("zfree", ctypes.c_void_p),
        ("opaque", ctypes.c_void_p),
        ("data_type", ctypes.c_int),
        ("adler", ctypes.c_ulong),
        ("reserved", ctypes.c_ulong),
    ]


# The zlib library's names on Linux, macOS and Windows; ctypes.util.find_library is the
# last resort, since on Linux it runs ldconfig (a child process) to search.
_LIBZ_NAMES = ("libz.so.1", "libz.dylib", "zlib1.dll")


@functools.cache
def _libz() -> ctypes.CDLL | None:
    library = None
    for name in _LIBZ_NAMES:
        try:
            library = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        found = ctypes.util.find_library("z")
        try:
            library = ctypes.CDLL(found) if found else None
        except OSError:
            library = None
    if library is None:
        return None
    stream = ctypes.POINTER(_ZStream)
    library.zlibVersion.restype = ctypes.c_char_p
    library.zlibVersion.argtypes = []
    library.inflateInit2_.argtypes = [stream, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    library.inflate.argtypes = [stream, ctypes.c_int]
    library.inflateEnd.argtypes = [stream]
    return library


def available() -> bool:
    """Whether the zlib library could be loaded (it ships with every Linux and macOS)."""
    return _libz() is not None


def make_continuable(stream: bytearray) -> bytearray:
    """Turn a complete raw deflate stream into one that another raw stream may follow.

    Changes ``stream`` in place and returns it: its last block is no longer final, and
    it ends byte-aligned with an empty stored block. Raises ``ValueError`` when
    ``stream`` is not one complete raw deflate stream, and ``RuntimeError`` when the
    zlib library is not available.
    """
    last_block, end = _last_block_bounds(stream)
    del stream[(end + 7) // 8 :]  # anything after the stream
    stream[last_block // 8] &= ~(1 << (last_block % 8)) & 0xFF
    used = end % 8  # bits of the last byte that belong to the stream
    if used:
        stream[-1] &= (1 << used) - 1  # the padding after the end must read as zeros
    # The empty stored block's 3 header bits (not final, type 00) are zeros: they fit in
    # the last byte's padding when 3 bits are free, else in one more zero byte.
    if used == 0 or used > 5:
        stream.append(0)
    stream += _EMPTY_STORED_BLOCK_LENGTHS
    return stream


def _last_block_bounds(stream: bytearray) -> tuple[int, int]:
    """Bit positions of the start of the final block and of the end of the stream."""
    libz = _libz()
    if libz is None:
        raise RuntimeError("the zlib library could not be loaded")
    if not stream:
        raise ValueError("an empty buffer is not a deflate stream")
    z = _ZStream()
    status = libz.inflateInit2_(ctypes.byref(z), -15, libz.zlibVersion(), ctypes.sizeof(_ZStream))
    if status != _Z_OK:
        raise RuntimeError(f"zlib's inflateInit2_ failed with status {status}")
    source = (ctypes.c_char * len(stream)).from_buffer(stream)
    scratch = ctypes.create_string_buffer(_SCRATCH)
    z.next_in, z.avail_in = ctypes.addressof(source), len(stream)
    block_start = 0
    try:
        while True:
            if z.avail_out == 0:
                z.next_out, z.avail_out = ctypes.addressof(scratch), _SCRATCH
            status = libz.inflate(ctypes.byref(z), _Z_BLOCK)
            if status == _Z_BUF_ERROR:
                raise ValueError("not one complete raw deflate stream: it is truncated")
            if status != _Z_OK:
                reason = z.msg.decode(errors="replace") if z.msg else f"status {status}"
                raise ValueError(f"not one complete raw deflate stream: {reason}")
            if z.data_type & _AT_BLOCK_END:
                here = z.total_in * 8 - (z.data_type & _UNUSED_BITS)
                if z.data_type & _IN_LAST_BLOCK:
                    return block_start, here
                block_start = here
    finally:
        libz.inflateEnd(ctypes.byref(z))
        del source  # release the export of stream's buffer
