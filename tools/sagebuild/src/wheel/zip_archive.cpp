#include "wheel/zip_archive.h"

#include <algorithm>
#include <cstring>
#include <libdeflate.h>
#include <memory>
#include <optional>

#include <fmt/format.h>

namespace sagebuild::wheel {
namespace {

constexpr std::uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr std::uint32_t kZip64EndLocator = 0x07064b50;
constexpr std::uint32_t kZip64End = 0x06064b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint32_t kDataDescriptor = 0x08074b50;
constexpr std::uint16_t kZip64ExtraId = 0x0001;
constexpr std::uint16_t kUnicodePathExtraId = 0x7075;
constexpr std::size_t kEndRecordSize = 22;
constexpr std::size_t kMaxComment = 0xffff;
constexpr int kMaxVersionNeeded = 63;
// General-purpose flags a wheel may carry: deflate options (bits 1, 2), a data descriptor (3),
// UTF-8 names (11). Encryption (bit 0) has its own message.
constexpr std::uint16_t kReadableFlags = 0x0002 | 0x0004 | 0x0008 | 0x0800 | 0x0001;

// Little-endian field reader over a byte span, bounds-checked.
class Fields {
 public:
  Fields(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool has(std::size_t n) const { return pos_ + n <= size_; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  void skip(std::size_t n) { pos_ += n; }
  std::size_t pos() const { return pos_; }

 private:
  std::uint64_t get(std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
      v |= std::uint64_t{data_[pos_ + i]} << (8 * i);
    pos_ += n;
    return v;
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

bool read_at(std::ifstream& in, std::uint64_t offset, std::uint8_t* out, std::size_t size) {
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(size));
  return static_cast<std::size_t>(in.gcount()) == size;
}

Error structure_error(const std::filesystem::path& path, std::string_view why) {
  return Error{fmt::format("{} is not a readable ZIP archive: {}", path.filename().string(), why)};
}

// CRC-32 (ISO-HDLC) via libdeflate, which uses the CPU's carry-less multiply.
std::uint32_t crc32_of(const std::vector<std::uint8_t>& data) {
  return libdeflate_crc32(0, data.data(), data.size());
}

// The Info-ZIP Unicode Path extra field (0x7075: version 1, the CRC-32 of the header's name, a
// UTF-8 name). CPython 3.12+ installs the member under that name when the CRC matches, 3.11 and
// earlier under the header's, some unpackers in either case: one field that does not repeat the
// header's name exactly gives one member two names. Returns why, or nothing.
std::optional<std::string> second_name(std::string_view name, const std::uint8_t* data,
                                       std::size_t size) {
  if (size < 5 || data[0] != 1) {
    return fmt::format("'{}' carries a malformed Unicode Path extra field (0x7075)", name);
  }
  const std::string_view unicode(reinterpret_cast<const char*>(data + 5), size - 5);
  if (unicode != name) {
    return fmt::format(
        "'{}' carries a Unicode Path extra field (0x7075) naming it '{}': CPython 3.12+ would "
        "install it under that name, earlier versions under the header's",
        name, unicode);
  }
  const std::uint32_t crc = libdeflate_crc32(0, name.data(), name.size());
  if (Fields(data + 1, 4).u32() != crc) {
    return fmt::format("'{}' carries a Unicode Path extra field (0x7075) whose name CRC is wrong",
                       name);
  }
  return std::nullopt;
}

// The extra fields of one header: each must fit, and a Unicode Path field must repeat the name.
std::optional<std::string> check_extra_names(std::string_view name, const std::uint8_t* data,
                                             std::size_t size) {
  Fields extra(data, size);
  while (extra.has(4)) {
    const std::uint16_t id = extra.u16(), length = extra.u16();
    if (!extra.has(length))
      return fmt::format("the extra field of '{}' runs past its record", name);
    if (id == kUnicodePathExtraId) {
      if (auto why = second_name(name, data + extra.pos(), length)) return why;
    }
    extra.skip(length);
  }
  if (extra.pos() != size) return fmt::format("the extra field of '{}' has a partial header", name);
  return std::nullopt;
}

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// The members must tile the file: the first at offset 0 (nothing before it: a self-extracting
// stub or a second archive), each member's local header, name, extra field, data and data
// descriptor ending before the next one starts (members that overlap are how non-recursive zip
// bombs share one compressed stream), the central directory after the last, and the end records
// after it.
std::optional<std::string> check_layout(std::ifstream& in, const std::vector<ZipEntry>& entries,
                                        std::uint64_t cd_offset) {
  std::vector<const ZipEntry*> order;
  order.reserve(entries.size());
  for (const ZipEntry& e : entries)
    order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const ZipEntry* a, const ZipEntry* b) {
    return a->local_header_offset < b->local_header_offset;
  });
  std::uint64_t next_free = 0;
  for (const ZipEntry* e : order) {
    if (e->local_header_offset != next_free) {
      if (e->local_header_offset > next_free) {
        return fmt::format("{} bytes before '{}' belong to no member",
                           e->local_header_offset - next_free, e->name);
      }
      return fmt::format(
          "'{}' overlaps the member before it (its local header is inside that "
          "member's data: a zip bomb's trick)",
          e->name);
    }
    std::uint8_t local[30];
    if (e->local_header_offset + 30 > cd_offset ||
        !read_at(in, e->local_header_offset, local, 30)) {
      return fmt::format("the local header of '{}' is outside the members' area", e->name);
    }
    Fields lengths(local + 26, 4);
    const std::uint64_t name_len = lengths.u16(), extra_len = lengths.u16();
    std::uint64_t end = e->local_header_offset + 30 + name_len + extra_len + e->compressed_size;
    if (e->flags & 0x8) {  // a data descriptor follows: 12 or 16 bytes (zip64: 20 or 24)
      std::uint8_t signature[4];
      const bool signed_descriptor = end + 4 <= cd_offset && read_at(in, end, signature, 4) &&
                                     Fields(signature, 4).u32() == kDataDescriptor;
      const bool zip64 = e->size >= 0xffffffff || e->compressed_size >= 0xffffffff;
      end += (signed_descriptor ? 4 : 0) + (zip64 ? 20 : 12);
    }
    if (end > cd_offset) {
      return fmt::format("'{}' extends into the central directory", e->name);
    }
    next_free = end;
  }
  if (next_free != cd_offset) {
    return fmt::format(
        "{} bytes between the last member and the central directory belong to no "
        "member",
        cd_offset - next_free);
  }
  return std::nullopt;
}

// Where the central directory lies, as the end records say.
struct Directory {
  std::uint64_t entries_on_disk = 0, entries = 0;
  std::uint64_t size = 0, offset = 0;
  std::uint64_t end_offset = 0;    // where the classic end record starts
  std::uint64_t trailer_size = 0;  // ZIP64 end record and locator, when present
  bool saturated = false;          // a classic field at its maximum: ZIP64 must say the value
};

// The classic end record. CPython's zipfile (and so pip) takes the *last* end-record signature
// in the file's last 22 + 65535 bytes, whatever its comment length says; other readers take
// the record whose comment reaches the end of the file. One record must be both, or the two
// read different archives. A signature within the last 21 bytes (an archive comment ending in
// one) is where CPython looks, finds no whole record, and reads no archive.
Expected<Directory> read_end_record(std::ifstream& in, std::uint64_t file_size) {
  const std::size_t tail_size =
      static_cast<std::size_t>(std::min<std::uint64_t>(file_size, kEndRecordSize + kMaxComment));
  std::vector<std::uint8_t> tail(tail_size);
  if (!read_at(in, file_size - tail_size, tail.data(), tail_size)) {
    return Error{"cannot read its end"};
  }
  std::optional<std::size_t> end_at;
  for (std::size_t i = tail_size - 3; i-- > 0;) {
    if (Fields(&tail[i], 4).u32() == kEndOfCentralDirectory) {
      end_at = i;
      break;
    }
  }
  if (!end_at) return Error{"no end of central directory record"};
  if (*end_at + kEndRecordSize > tail_size) {
    return Error{
        "the archive comment ends in an end-record signature (CPython's zipfile then finds no "
        "archive)"};
  }
  if (const std::size_t comment = Fields(&tail[*end_at + 20], 2).u16();
      *end_at + kEndRecordSize + comment != tail_size) {
    return Error{
        fmt::format("{} bytes after the end record that its comment length does not "
                    "cover (readers disagree on where the archive ends)",
                    static_cast<std::int64_t>(tail_size) -
                        static_cast<std::int64_t>(*end_at + kEndRecordSize + comment))};
  }
  Fields end(&tail[*end_at], kEndRecordSize);
  end.skip(4);
  const std::uint16_t disk = end.u16(), cd_disk = end.u16();
  if (disk != 0 || cd_disk != 0) return Error{"multi-disk archives are not wheels"};
  Directory d;
  d.entries_on_disk = end.u16();
  d.entries = end.u16();
  d.size = end.u32();
  d.offset = end.u32();
  d.end_offset = file_size - tail_size + *end_at;
  d.saturated = d.entries_on_disk == 0xffff || d.entries == 0xffff || d.size == 0xffffffff ||
                d.offset == 0xffffffff;
  return d;
}

// ZIP64: CPython uses a ZIP64 end record whenever a locator sits right before the end record,
// saturated fields or not, and looks for the record right before the locator; other readers
// follow the locator's offset. Both must name one record, and where the classic record is not
// saturated it must say what the ZIP64 record says: otherwise two central directories. The
// directory takes the ZIP64 record's values; why not, where it cannot.
std::optional<std::string> apply_zip64(std::ifstream& in, Directory& d) {
  std::uint8_t locator[20];
  const bool has_locator = d.end_offset >= 20 && read_at(in, d.end_offset - 20, locator, 20) &&
                           Fields(locator, 20).u32() == kZip64EndLocator;
  if (!has_locator) {
    if (d.saturated) return "ZIP64 sizes without a ZIP64 locator";
    return std::nullopt;
  }
  Fields loc(locator, 20);
  loc.skip(4);
  const std::uint32_t record_disk = loc.u32();
  const std::uint64_t record_offset = loc.u64();
  const std::uint32_t disks = loc.u32();
  if (record_disk != 0 || disks > 1) return "multi-disk archives are not wheels";
  std::uint8_t record[56];
  if (d.end_offset < 20 + 56 || record_offset != d.end_offset - 20 - 56 ||
      !read_at(in, record_offset, record, 56) || Fields(record, 4).u32() != kZip64End) {
    return "the ZIP64 locator does not point at a ZIP64 end record right before it (readers "
           "would disagree on the central directory)";
  }
  Fields r(record, 56);
  r.skip(4);
  const std::uint64_t record_size = r.u64();
  r.skip(2 + 2);
  const std::uint32_t z_disk = r.u32(), z_cd_disk = r.u32();
  const std::uint64_t z_on_disk = r.u64(), z_total = r.u64(), z_cd_size = r.u64(),
                      z_cd_offset = r.u64();
  if (record_size != 44) return "a ZIP64 end record with extensible data";
  if (z_disk != 0 || z_cd_disk != 0) return "multi-disk archives are not wheels";
  auto agrees = [](std::uint64_t classic, std::uint64_t full, std::uint64_t saturation) {
    return classic == saturation || classic == full;
  };
  if (!agrees(d.entries_on_disk, z_on_disk, 0xffff) || !agrees(d.entries, z_total, 0xffff) ||
      !agrees(d.size, z_cd_size, 0xffffffff) || !agrees(d.offset, z_cd_offset, 0xffffffff)) {
    return "the end record and the ZIP64 end record name different central directories";
  }
  d.entries_on_disk = z_on_disk;
  d.entries = z_total;
  d.size = z_cd_size;
  d.offset = z_cd_offset;
  d.trailer_size = 56 + 20;
  return std::nullopt;
}

// The directory's counts and place: within the limits and the file, and right before the end
// records. (CPython shifts every offset by the bytes between the central directory's end and
// the end records, "concat": a stub prepended to the archive; other readers do not. None
// allowed.)
std::optional<std::string> check_directory(const Directory& d, const ZipLimits& limits) {
  if (d.entries_on_disk != d.entries) return "inconsistent entry counts";
  if (d.entries > limits.max_entries) {
    return fmt::format("{} entries, more than the limit of {}", d.entries, limits.max_entries);
  }
  if (d.offset > d.end_offset || d.size > d.end_offset - d.offset) {
    return "central directory outside the file";
  }
  if (d.offset + d.size + d.trailer_size != d.end_offset) {
    return fmt::format("{} bytes between the central directory and the end records",
                       static_cast<std::int64_t>(d.end_offset) -
                           static_cast<std::int64_t>(d.offset + d.size + d.trailer_size));
  }
  return std::nullopt;
}

// The 64-bit values of a record's saturated fields, from its ZIP64 extra field, in this order.
// CPython refuses an extra field that runs past its area, or a ZIP64 field that lacks a value
// for a saturated field; so does this reader, rather than keep the saturated value.
std::optional<std::string> read_extra_fields(ZipEntry& e, const std::uint8_t* data,
                                             std::size_t size) {
  if (auto why = check_extra_names(e.name, data, size)) return why;
  Fields extra(data, size);
  bool zip64_complete = true;
  while (extra.has(4)) {
    const std::uint16_t id = extra.u16(), field_size = extra.u16();
    if (!extra.has(field_size)) {
      return fmt::format("the extra field of '{}' runs past its record", e.name);
    }
    if (id == kZip64ExtraId) {
      Fields z(data + extra.pos(), field_size);
      for (std::uint64_t* field : {&e.size, &e.compressed_size, &e.local_header_offset}) {
        if (*field != 0xffffffff) continue;
        if (!z.has(8)) {
          zip64_complete = false;
          break;
        }
        *field = z.u64();
      }
    }
    extra.skip(field_size);
  }
  if (extra.pos() != size)
    return fmt::format("the extra field of '{}' has a partial header", e.name);
  if (!zip64_complete) {
    return fmt::format("'{}' has a saturated size or offset without its ZIP64 value", e.name);
  }
  return std::nullopt;
}

// Central directory record `index` (from 0) at f's position, f moved past it.
Expected<ZipEntry> read_central_record(Fields& f, const std::uint8_t* cd, std::uint64_t index) {
  if (!f.has(46) || f.u32() != kCentralHeader) {
    return Error{fmt::format("central directory record {} is damaged", index + 1)};
  }
  ZipEntry e;
  e.made_by = f.u16();
  e.version_needed = f.u16();
  e.flags = f.u16();
  e.method = f.u16();
  f.skip(4);  // time, date
  e.crc32 = f.u32();
  e.compressed_size = f.u32();
  e.size = f.u32();
  const std::uint16_t name_len = f.u16(), extra_len = f.u16(), comment_len = f.u16();
  f.skip(2 + 2);  // disk start, internal attributes
  e.external_attributes = f.u32();
  e.local_header_offset = f.u32();
  if (!f.has(std::size_t{name_len} + extra_len + comment_len)) {
    return Error{fmt::format("central directory record {} is truncated", index + 1)};
  }
  const std::size_t name_at = f.pos();
  e.name.assign(reinterpret_cast<const char*>(cd + name_at), name_len);
  if (auto why = read_extra_fields(e, cd + name_at + name_len, extra_len)) return Error{*why};
  f.skip(std::size_t{name_len} + extra_len + comment_len);
  return e;
}

// The whole archive's declared size, before anything is inflated (each entry's own limit and
// ratio are checked as it is read).
std::optional<std::string> check_declared_size(const std::vector<ZipEntry>& entries,
                                               const ZipLimits& limits) {
  std::uint64_t declared = 0;
  for (const ZipEntry& e : entries) {
    declared += std::min(e.size, limits.max_total_size + 1);
    if (declared > limits.max_total_size) {
      return fmt::format("the entries declare more than {} bytes in all, the limit for one archive",
                         limits.max_total_size);
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<ZipArchive> ZipArchive::open(const std::filesystem::path& path, const ZipLimits& limits) {
  ZipArchive archive;
  archive.path_ = path;
  archive.limits_ = limits;
  std::error_code ec;
  archive.file_size_ = std::filesystem::file_size(path, ec);
  if (ec) return Error{fmt::format("cannot read {}: {}", path.string(), ec.message())};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("cannot open {}", path.string())};
  if (archive.file_size_ < kEndRecordSize) return structure_error(path, "too short");

  auto directory = read_end_record(in, archive.file_size_);
  if (!directory) return structure_error(path, directory.error().message);
  Directory& d = *directory;
  if (auto why = apply_zip64(in, d)) return structure_error(path, *why);
  if (auto why = check_directory(d, limits)) return structure_error(path, *why);
  std::vector<std::uint8_t> cd(static_cast<std::size_t>(d.size));
  if (!read_at(in, d.offset, cd.data(), cd.size())) {
    return structure_error(path, "cannot read the central directory");
  }
  Fields f(cd.data(), cd.size());
  for (std::uint64_t i = 0; i < d.entries; ++i) {
    auto entry = read_central_record(f, cd.data(), i);
    if (!entry) return structure_error(path, entry.error().message);
    archive.entries_.push_back(std::move(*entry));
  }
  // CPython reads records until their sizes fill cd_size, ignoring the count; other readers
  // read `count` records. Both must see the same list.
  if (f.pos() != cd.size()) {
    return structure_error(
        path, fmt::format("the end record counts {} central directory records, but they fill {} "
                          "of the directory's {} bytes",
                          d.entries, f.pos(), cd.size()));
  }
  if (auto why = check_declared_size(archive.entries_, limits)) return structure_error(path, *why);
  if (auto layout = check_layout(in, archive.entries_, d.offset); layout) {
    return structure_error(path, *layout);
  }
  return archive;
}

std::optional<ZipError> ZipArchive::read(std::ifstream& in, const ZipEntry& e,
                                         std::vector<std::uint8_t>& out,
                                         std::vector<std::uint8_t>& scratch) const {
  if (e.flags & 0x1) return ZipError{ZipErrorKind::unsupported, "entry is encrypted"};
  // CPython's zipfile refuses to open an entry that needs a ZIP version past 6.3 (its low byte).
  if (const int needed = e.version_needed & 0xff; needed > kMaxVersionNeeded) {
    return ZipError{ZipErrorKind::unsupported,
                    fmt::format("needs ZIP version {}.{} to extract (CPython reads up to 6.3)",
                                needed / 10, needed % 10)};
  }
  if (const std::uint16_t unknown = e.flags & ~kReadableFlags; unknown) {
    // Bit 5 (patched data) and 6 (strong encryption) make CPython's zipfile raise; the others
    // mean nothing a wheel needs, and another reader may act on them.
    return ZipError{
        ZipErrorKind::unsupported,
        fmt::format("general-purpose flags 0x{:04x} (a wheel uses only bits 1-3 and 11)", unknown)};
  }
  if (e.method != 0 && e.method != 8) {
    return ZipError{ZipErrorKind::unsupported,
                    fmt::format("compression method {} (wheels use stored or deflate)", e.method)};
  }
  // Bounds first, from the declared sizes, before any byte is inflated.
  if (e.size > limits_.max_entry_size) {
    return ZipError{ZipErrorKind::size_bounds,
                    fmt::format("declares {} bytes, more than the limit of {}", e.size,
                                limits_.max_entry_size)};
  }
  if (e.size > (1u << 20) &&
      e.size / std::max<std::uint64_t>(e.compressed_size, 1) > limits_.max_ratio) {
    return ZipError{
        ZipErrorKind::size_bounds,
        fmt::format("compression ratio {}:1 is above the limit of {}:1 (a zip bomb?)",
                    e.size / std::max<std::uint64_t>(e.compressed_size, 1), limits_.max_ratio)};
  }
  if (e.method == 0 && e.size != e.compressed_size) {
    return ZipError{ZipErrorKind::size_bounds, "stored entry with different sizes"};
  }
  std::uint8_t local[30];
  if (e.local_header_offset + 30 > file_size_ || !read_at(in, e.local_header_offset, local, 30)) {
    return ZipError{ZipErrorKind::structure, "local header outside the file"};
  }
  Fields h(local, 30);
  if (h.u32() != kLocalHeader) return ZipError{ZipErrorKind::structure, "no local header"};
  h.skip(2);
  const std::uint16_t flags = h.u16(), method = h.u16();
  h.skip(4);  // time, date
  const std::uint32_t local_crc = h.u32(), local_compressed = h.u32(), local_size = h.u32();
  const std::uint16_t name_len = h.u16(), extra_len = h.u16();
  if (method != e.method || flags != e.flags) {
    return ZipError{ZipErrorKind::structure, "local header disagrees with the central directory"};
  }
  // Without a data descriptor the local header repeats CRC and sizes (saturated ones live in
  // its ZIP64 extra field): an unpacker that trusts it must get the same file.
  const bool saturated = local_compressed == 0xffffffff || local_size == 0xffffffff;
  if (!(flags & 0x8) &&
      (local_crc != e.crc32 ||
       (!saturated && (local_compressed != e.compressed_size || local_size != e.size)))) {
    return ZipError{ZipErrorKind::structure,
                    "the local header's CRC or sizes disagree with the central directory"};
  }
  std::string local_name(name_len, '\0');
  if (!read_at(in, e.local_header_offset + 30, reinterpret_cast<std::uint8_t*>(local_name.data()),
               name_len) ||
      local_name != e.name) {
    return ZipError{ZipErrorKind::structure,
                    "the local header names a different file than the central directory"};
  }
  // The local header's extra field: installers that read it must see the same name.
  std::vector<std::uint8_t> local_extra(extra_len);
  if (!read_at(in, e.local_header_offset + 30 + name_len, local_extra.data(), extra_len)) {
    return ZipError{ZipErrorKind::structure, "the local header's extra field is truncated"};
  }
  if (auto why = check_extra_names(e.name, local_extra.data(), extra_len)) {
    return ZipError{ZipErrorKind::structure, *why};
  }
  const std::uint64_t data_offset = e.local_header_offset + 30 + name_len + extra_len;
  if (data_offset > file_size_ || e.compressed_size > file_size_ - data_offset) {
    return ZipError{ZipErrorKind::structure, "data extends past the end of the file"};
  }

  out.resize(static_cast<std::size_t>(e.size));
  if (e.method == 0) {
    if (!read_at(in, data_offset, out.data(), out.size())) {
      return ZipError{ZipErrorKind::structure, "cannot read the data"};
    }
  } else {
    scratch.resize(static_cast<std::size_t>(e.compressed_size));
    if (!read_at(in, data_offset, scratch.data(), scratch.size())) {
      return ZipError{ZipErrorKind::structure, "cannot read the data"};
    }
    thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> decompressor(
        libdeflate_alloc_decompressor());
    std::size_t consumed = 0, produced = 0;
    // The output buffer is exactly the declared size: a stream that inflates further stops
    // with INSUFFICIENT_SPACE instead of growing memory.
    const auto status =
        libdeflate_deflate_decompress_ex(decompressor.get(), scratch.data(), scratch.size(),
                                         out.data(), out.size(), &consumed, &produced);
    if (status == LIBDEFLATE_INSUFFICIENT_SPACE) {
      return ZipError{ZipErrorKind::size_bounds,
                      fmt::format("inflates past its declared size of {} bytes", e.size)};
    }
    if (status == LIBDEFLATE_SHORT_OUTPUT || (status == LIBDEFLATE_SUCCESS && produced != e.size)) {
      return ZipError{ZipErrorKind::size_bounds,
                      fmt::format("inflates to {} bytes, not the declared {}", produced, e.size)};
    }
    if (status != LIBDEFLATE_SUCCESS) {
      return ZipError{ZipErrorKind::structure, "the compressed data is corrupt"};
    }
  }
  if (flags & 0x8) {  // the data descriptor after the data must say what the central record says
    std::uint8_t d[24];
    const std::uint64_t at = data_offset + e.compressed_size;
    const std::size_t available =
        static_cast<std::size_t>(std::min<std::uint64_t>(24, file_size_ - at));
    if (available < 12 || !read_at(in, at, d, available)) {
      return ZipError{ZipErrorKind::structure, "the data descriptor is missing"};
    }
    Fields dd(d, available);
    const bool signed_descriptor = Fields(d, 4).u32() == kDataDescriptor;
    if (signed_descriptor) dd.skip(4);
    const bool zip64 = e.size >= 0xffffffff || e.compressed_size >= 0xffffffff;
    if (!dd.has(zip64 ? 20 : 12)) {
      return ZipError{ZipErrorKind::structure, "the data descriptor is truncated"};
    }
    const std::uint32_t crc = dd.u32();
    const std::uint64_t compressed = zip64 ? dd.u64() : dd.u32(),
                        size = zip64 ? dd.u64() : dd.u32();
    if (crc != e.crc32 || compressed != e.compressed_size || size != e.size) {
      return ZipError{ZipErrorKind::structure,
                      "the data descriptor's CRC or sizes disagree with the central directory"};
    }
  }
  if (const std::uint32_t crc = crc32_of(out); crc != e.crc32) {
    return ZipError{ZipErrorKind::crc,
                    fmt::format("CRC-32 is {:08x}, the archive says {:08x}", crc, e.crc32)};
  }
  return std::nullopt;
}

}  // namespace sagebuild::wheel
