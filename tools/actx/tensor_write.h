/* tensor_write.h — writing TensorProto files (.pb), the format of ONNX's node tests.
 *
 * tools/ort/model.h reads TensorProtos but does not write them; the few fields a test tensor
 * needs (dims, data_type, name, raw_data) are encoded here directly in protobuf's wire format. */
#ifndef ACTX_TOOLS_TENSOR_WRITE_H
#define ACTX_TOOLS_TENSOR_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* Encodes a TensorProto into a malloc'ed buffer. data holds bytes bytes (little-endian
 * elements). 0, or -1 if out of memory. */
int actx_tensor_proto_encode(const char *name, int32_t elem_type, size_t rank,
                             const int64_t *dims, const void *data, size_t bytes, uint8_t **out,
                             size_t *out_size);

/* Writes size bytes to path (replacing it). 0, or -1 with errno. */
int actx_write_file(const char *path, const void *bytes, size_t size);

/* Encodes and writes a TensorProto file. 0, or -1 with a message. */
int actx_tensor_proto_write(const char *path, const char *name, int32_t elem_type, size_t rank,
                            const int64_t *dims, const void *data, size_t bytes, char *err,
                            size_t err_size);

#endif /* ACTX_TOOLS_TENSOR_WRITE_H */
