/* tensor_write.c — TensorProto in protobuf wire format (see tensor_write.h).
 *
 * onnx.proto's TensorProto fields used: 1 dims (repeated int64), 2 data_type (int32),
 * 8 name (string), 9 raw_data (bytes). Each is written as key = field << 3 | wire type, then a
 * varint (wire type 0) or a length-prefixed byte string (wire type 2). */
#include "tensor_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_DIMS 1
#define FIELD_DATA_TYPE 2
#define FIELD_NAME 8
#define FIELD_RAW_DATA 9
#define WIRE_VARINT 0
#define WIRE_LENGTH_DELIMITED 2
#define MAX_VARINT_BYTES 10

static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    p[n++] = byte | (v != 0 ? 0x80 : 0);
  } while (v != 0);
  return n;
}

static size_t put_key(uint8_t *p, unsigned field, unsigned wire) {
  return put_varint(p, (uint64_t)field << 3 | wire);
}

int actx_tensor_proto_encode(const char *name, int32_t elem_type, size_t rank,
                             const int64_t *dims, const void *data, size_t bytes, uint8_t **out,
                             size_t *out_size) {
  size_t name_len = name != NULL ? strlen(name) : 0;
  size_t capacity = (rank + 4) * (1 + MAX_VARINT_BYTES) + name_len + bytes;
  uint8_t *buf = malloc(capacity);
  if (buf == NULL)
    return -1;
  size_t n = 0;
  for (size_t d = 0; d < rank; d++) {
    n += put_key(buf + n, FIELD_DIMS, WIRE_VARINT);
    n += put_varint(buf + n, (uint64_t)dims[d]); /* int64: negative values as 10-byte varints */
  }
  n += put_key(buf + n, FIELD_DATA_TYPE, WIRE_VARINT);
  n += put_varint(buf + n, (uint64_t)(int64_t)elem_type);
  if (name_len > 0) {
    n += put_key(buf + n, FIELD_NAME, WIRE_LENGTH_DELIMITED);
    n += put_varint(buf + n, name_len);
    memcpy(buf + n, name, name_len);
    n += name_len;
  }
  n += put_key(buf + n, FIELD_RAW_DATA, WIRE_LENGTH_DELIMITED);
  n += put_varint(buf + n, bytes);
  if (bytes > 0)
    memcpy(buf + n, data, bytes);
  n += bytes;
  *out = buf;
  *out_size = n;
  return 0;
}

int actx_write_file(const char *path, const void *bytes, size_t size) {
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return -1;
  size_t written = size > 0 ? fwrite(bytes, 1, size, f) : 0;
  int saved = errno;
  if (fclose(f) != 0 || written != size) {
    errno = written != size ? saved : errno;
    return -1;
  }
  return 0;
}

int actx_tensor_proto_write(const char *path, const char *name, int32_t elem_type, size_t rank,
                            const int64_t *dims, const void *data, size_t bytes, char *err,
                            size_t err_size) {
  uint8_t *buf = NULL;
  size_t size = 0;
  if (actx_tensor_proto_encode(name, elem_type, rank, dims, data, bytes, &buf, &size) != 0) {
    snprintf(err, err_size, "%s: out of memory", path);
    return -1;
  }
  int rc = actx_write_file(path, buf, size);
  if (rc != 0)
    snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
  free(buf);
  return rc;
}
