// --decode jpeg: a DataLoader worker's image decode done natively, with libjpeg-turbo's libjpeg
// API (Debian's libjpeg62-turbo), on the worker thread that read the sample: the decode cost of
// a Dataset's __getitem__ without Python (PIL's Image.open + load uses the same library).
// Each sample is decoded whole to 8-bit RGB (JCS_RGB, the islow DCT, libjpeg's defaults, as PIL
// decodes); the pixels are kept in the decoder's buffer until the next sample and not used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ioprobe {

/// What one decode gave.
struct JpegDecodeResult {
  bool ok = false;
  uint32_t width = 0, height = 0;  // px
  std::string error;               // libjpeg-turbo's message when !ok ("Not a JPEG file: starts with 0x.. 0x..")
};

/// One worker's decoder; not thread-safe (each worker owns one). Never throws on bad input: a file
/// that is not a JPEG, or a corrupt one, gives ok = false with libjpeg-turbo's message.
class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  /// Decodes `len` bytes at `data` to RGB. Images larger than 2^28 pixels are refused (ok = false)
  /// rather than allocated; so is a truncated file (libjpeg-turbo would fill the rest with grey and
  /// warn; PIL refuses it). Other warnings (extraneous bytes) are not errors, as in PIL.
  JpegDecodeResult decode(const unsigned char* data, size_t len);

  /// The last decoded image, RGB interleaved, width x height x 3 bytes.
  const std::vector<unsigned char>& pixels() const { return rgb_; }

 private:
  struct Impl;
  Impl* impl_;
  std::vector<unsigned char> rgb_;
};

}  // namespace ioprobe
