#include "loader/jpeg_decode.hpp"

// jpeglib.h needs size_t and FILE declared first.
#include <csetjmp>
#include <cstdio>

#include <jerror.h>
#include <jpeglib.h>

#include <new>

#include <fmt/format.h>

namespace ioprobe {

namespace {

constexpr uint64_t kMaxPixels = 1ULL << 28;

struct ErrorMgr {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error(j_common_ptr c) {
  auto* e = reinterpret_cast<ErrorMgr*>(c->err);
  (*c->err->format_message)(c, e->msg);
  std::longjmp(e->jump, 1);
}

void silent(j_common_ptr) {}

// Warnings are not errors (PIL decodes such files too), except the end of the data before the
// end of the image: a truncated file, which PIL refuses ("image file is truncated").
void on_message(j_common_ptr c, int level) {
  if (level == -1 && c->err->msg_code == JWRN_JPEG_EOF) on_error(c);
}

}  // namespace

struct JpegDecoder::Impl {
  jpeg_decompress_struct cinfo;
  ErrorMgr jerr;
};

JpegDecoder::JpegDecoder() : impl_(new Impl{}) {
  impl_->cinfo.err = jpeg_std_error(&impl_->jerr.pub);
  impl_->jerr.pub.error_exit = on_error;
  impl_->jerr.pub.output_message = silent;
  impl_->jerr.pub.emit_message = on_message;
  if (setjmp(impl_->jerr.jump)) {  // jpeg_create_decompress fails only when out of memory
    delete impl_;
    throw std::bad_alloc();
  }
  jpeg_create_decompress(&impl_->cinfo);
}

JpegDecoder::~JpegDecoder() {
  jpeg_destroy_decompress(&impl_->cinfo);
  delete impl_;
}

JpegDecodeResult JpegDecoder::decode(const unsigned char* data, size_t len) {
  JpegDecodeResult r;
  jpeg_decompress_struct& c = impl_->cinfo;
  // No C++ object with a destructor lives between setjmp and a longjmp below.
  if (setjmp(impl_->jerr.jump)) {
    jpeg_abort_decompress(&c);  // ready for the next file
    r.ok = false;
    r.error = impl_->jerr.msg;
    return r;
  }
  jpeg_mem_src(&c, data, static_cast<unsigned long>(len));
  jpeg_read_header(&c, TRUE);
  c.out_color_space = JCS_RGB;
  c.dct_method = JDCT_ISLOW;
  jpeg_start_decompress(&c);
  const uint64_t px = static_cast<uint64_t>(c.output_width) * c.output_height;
  if (px > kMaxPixels) {
    jpeg_abort_decompress(&c);
    r.error = fmt::format("{} x {} pixels: larger than the 2^28 pixels ioprobe decodes", c.output_width,
                          c.output_height);
    return r;
  }
  const size_t stride = static_cast<size_t>(c.output_width) * static_cast<size_t>(c.output_components);
  if (rgb_.size() < stride * c.output_height) rgb_.resize(stride * c.output_height);
  while (c.output_scanline < c.output_height) {
    JSAMPROW row = rgb_.data() + static_cast<size_t>(c.output_scanline) * stride;
    jpeg_read_scanlines(&c, &row, 1);
  }
  jpeg_finish_decompress(&c);
  r.ok = true;
  r.width = c.output_width;
  r.height = c.output_height;
  return r;
}

}  // namespace ioprobe
