// Real JPEG content for generated file datasets (--content jpeg): each file is a baseline JPEG that
// libjpeg-turbo encodes from a procedurally drawn image, exactly as large as the size the preset
// drew for it, and the same bytes for the same seed.
//
// What is sourced and what is assumed ("Compression in the ImageNet
// Dataset", terryalanunlimited.com, a survey of every ILSVRC2012 file's JPEG parameters):
//  - "the most common image size appears to be around 500 by 500", with rare outliers (very large,
//    or oddly proportioned such as 500 x 33);
//  - "the vast majority of the images are color images, are not chroma subsampled and were
//    quantized at quality 96".
// So every image is a colour (YCbCr) baseline JPEG, 4:4:4 (no chroma subsampling), quality 96,
// libjpeg's standard Huffman tables and its default (islow) DCT.
// ASSUMPTION (no published distribution of ImageNet's widths and heights was found): the long
// side is 500 px and the short side 500 x r, r uniform in [0.6, 1.0], landscape 3 times in 4.
// A file whose drawn size the image's pixels cannot hold at that quality (its bytes per pixel
// outside what the content can give) gets its dimensions scaled, keeping the aspect ratio:
// small files become small images and large files large ones, as ImageNet's outliers are.
//
// The image: a smooth field (a coarse grid of random colours, bilinearly interpolated) plus
// per-pixel noise of amplitude A; A, the "detail", sets how many bytes the entropy-coded data
// takes. A is chosen from a table of bytes per pixel against A measured once per process on a
// 128 x 128 tile, the image is encoded, and when the result is larger than the target (or short
// by 1-3 bytes, which no marker segment can fill) A is lowered and the image encoded again. The
// bytes still missing are filled with COM (comment) marker segments after the JFIF header, which
// every decoder skips. Typically one or two encodes per file.
//
// Determinism: the same (target size, seed) gives the same bytes with the same libjpeg-turbo
// build (the islow DCT and Huffman coding are exact integer code; another version may encode
// differently).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dataset/file_index.hpp"

namespace ioprobe {

/// Smallest and largest file sizes make_jpeg_file() makes, bytes. The smallest holds the headers
/// (JFIF, two quantisation and four Huffman tables: about 600 B) and a small image.
inline constexpr uint64_t kJpegMinBytes = 1024;
inline constexpr uint64_t kJpegMaxBytes = 8ULL << 20;  // one read request of the loader (--decode jpeg)

/// Image dimensions in pixels.
struct JpegDims {
  uint32_t width = 0;
  uint32_t height = 0;
};

/// The ImageNet-like dimensions drawn for `seed` (see the header comment), before any scaling to
/// the file's size.
JpegDims draw_jpeg_dims(uint64_t seed);

/// One generated file.
struct JpegFile {
  std::vector<unsigned char> bytes;  // exactly the target size
  JpegDims dims;                     // the image's dimensions, px
  uint64_t image_bytes = 0;          // bytes of the encoded image before the COM padding
  int encodes = 0;                   // libjpeg-turbo encodes it took
};

/// A baseline JPEG of exactly `target_bytes` bytes (kJpegMinBytes .. kJpegMaxBytes) from `seed`.
/// Throws Error (exit 1) when libjpeg-turbo fails, or when no image fits the target (it always
/// does within the bounds; the check guards against a libjpeg-turbo that encodes differently);
/// std::invalid_argument when target_bytes is outside the bounds.
JpegFile make_jpeg_file(uint64_t target_bytes, uint64_t seed);

/// True when `data` starts with a JPEG SOI marker followed by another marker (FF D8 FF).
bool has_jpeg_signature(const unsigned char* data, size_t len);

/// A file of the index that is not a JPEG (no FF D8 FF at its start, or unreadable): its display
/// path and why. Looks at up to `max_files` files spread evenly over the index (reading 3 bytes
/// of each); nullopt when all of them are JPEG. Never throws.
struct NotJpeg {
  std::string path;
  std::string why;  // "starts with 00 00 01", "empty", "open: Permission denied"
};
std::optional<NotJpeg> find_non_jpeg(const FileIndex& index, size_t max_files = 16);

}  // namespace ioprobe
