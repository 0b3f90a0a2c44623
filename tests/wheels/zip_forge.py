"""Byte-level ZIP rewriting for the adversarial wheels of the verify-wheel corpus: an archive that
zipfile wrote is taken apart into its entries (local header fields, raw compressed data, central
directory fields) and written again with whatever the case changes, so that each case can make
the local headers, the central directory, data descriptors, zip64 records and the bytes around
the archive disagree in exactly one way.
"""
import io
import struct
import zipfile
import zlib


class Entry:
    """One member: `name` and the central directory's fields; `lh_*` override the local header's
    copy of a field (None: the same as the central directory's)."""

    def __init__(self, name, raw, method, crc, csize, usize, flags=0, external_attr=0):
        self.name, self.raw, self.method, self.crc = name, raw, method, crc
        self.csize, self.usize, self.flags, self.external_attr = csize, usize, flags, external_attr
        self.lh_name = self.lh_crc = self.lh_csize = self.lh_usize = None
        self.descriptor = None   # (crc, csize, usize) written after the data (flag bit 3)
        self.offset = None       # the central directory's local-header offset, if forced
        self.in_central = True   # listed in the central directory
        self.skip_local = False  # not written as a member of its own
        self.inside = None       # with skip_local: the member whose data holds its local header
        self.version_needed = 20


def take_apart(archive):
    """[Entry] of an archive zipfile can read, in central directory order."""
    entries = []
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        for info in z.infolist():
            at = info.header_offset
            name_len, extra_len = struct.unpack_from("<HH", archive, at + 26)
            start = at + 30 + name_len + extra_len
            raw = archive[start:start + info.compress_size]
            entries.append(Entry(info.filename.encode("utf-8"), raw, info.compress_type, info.CRC,
                                 info.compress_size, info.file_size, info.flag_bits & 0x800,
                                 info.external_attr))
    return entries


def entry(name, data, method=zipfile.ZIP_DEFLATED, **fields):
    """A new member holding `data`, deflated or stored."""
    name = name if isinstance(name, bytes) else name.encode("utf-8")
    raw = data
    if method == zipfile.ZIP_DEFLATED:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        raw = c.compress(data) + c.flush()
    e = Entry(name, raw, method, zlib.crc32(data), len(raw), len(data))
    for key, value in fields.items():
        setattr(e, key, value)
    return e


def local_header(e):
    name = e.lh_name if e.lh_name is not None else e.name
    crc = e.lh_crc if e.lh_crc is not None else e.crc
    csize = e.lh_csize if e.lh_csize is not None else e.csize
    usize = e.lh_usize if e.lh_usize is not None else e.usize
    if e.descriptor is not None:
        crc = csize = usize = 0
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, e.version_needed, e.flags, e.method, 0, 0x21,
                       crc, csize, usize, len(name), 0) + name


def put_together(entries, prefix=b"", suffix=b"", zip64_eocd=None, comment=b""):
    """The archive's bytes. zip64_eocd: (total entries, central directory offset) written as a
    zip64 end record (with its locator) whose values the classic end record defers to."""
    out = bytearray(prefix)
    offsets = {}
    for e in entries:
        if e.skip_local:  # listed only: its local header is inside another member (e.inside)
            continue
        offsets[id(e)] = len(out)
        out += local_header(e) + e.raw
        if e.descriptor is not None:
            out += struct.pack("<IIII", 0x08074B50, *e.descriptor)
    for e in entries:
        if e.inside is not None:
            e.offset = offsets[id(e.inside)] + len(local_header(e.inside))
    central = bytearray()
    listed = [(e, offsets.get(id(e))) for e in entries if e.in_central]
    for e, offset in listed:
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, e.version_needed, e.flags,
                               e.method, 0, 0x21, e.crc, e.csize, e.usize, len(e.name), 0, 0, 0, 0,
                               e.external_attr, e.offset if e.offset is not None else offset) + e.name
    cd_offset = len(out)
    out += central
    count, where = len(listed), cd_offset
    if zip64_eocd is not None:
        z_count, z_offset = zip64_eocd
        z_at = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, z_count, z_count,
                           len(central), z_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, z_at, 1)
        count, where = 0xFFFF, 0xFFFFFFFF
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central), where,
                       len(comment)) + comment
    return bytes(out + suffix)
